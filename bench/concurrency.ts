/** Concurrency: many threads at once on one compiled graph with SqliteSaver on a file, against bare LangGraph. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fmt, median, type Table } from "./lib.js";

interface Result {
  stepsPerSecond: number;
  p50: number;
  p99: number;
  peakRssMb: number;
  errors: number;
  completed: number;
}

function runWorker(kind: string, threads: number, steps: number, db: string): Result {
  const worker = resolve(import.meta.dirname, "concurrency-worker.ts");
  const out = execFileSync(process.execPath, ["--import", "tsx", worker, kind, String(threads), String(steps), db], {
    encoding: "utf8",
    maxBuffer: 1 << 24,
  });
  return JSON.parse(out.trim().split("\n").pop()!) as Result;
}

export async function concurrency(quick: boolean): Promise<Table> {
  const loads = quick ? [1, 10, 100] : [1, 10, 100, 1000];
  const runs = quick ? 3 : 5;
  const dir = mkdtempSync(join(tmpdir(), "bench-conc-"));
  const rows: (string | number)[][] = [];
  try {
    for (const threads of loads) {
      const reps = threads >= 1000 ? Math.min(runs, 3) : runs;
      const pairs: [Result, Result][] = [];
      for (let r = 0; r < reps; r++) {
        const m = runWorker("manager", threads, 20, join(dir, `m-${threads}-${r}.sqlite`));
        const b = runWorker("bare", threads, 20, join(dir, `b-${threads}-${r}.sqlite`));
        pairs.push([m, b]);
      }
      const med = (pick: (r: Result) => number, side: 0 | 1) => median(pairs.map((p) => pick(p[side])));
      const ratio = median(pairs.map(([m, b]) => b.stepsPerSecond / m.stepsPerSecond));
      rows.push([
        threads,
        fmt(
          med((r) => r.stepsPerSecond, 0),
          0,
        ),
        fmt(
          med((r) => r.stepsPerSecond, 1),
          0,
        ),
        fmt(ratio),
        `${fmt(
          med((r) => r.p50, 0),
          1,
        )} / ${fmt(
          med((r) => r.p99, 0),
          1,
        )}`,
        `${fmt(
          med((r) => r.p50, 1),
          1,
        )} / ${fmt(
          med((r) => r.p99, 1),
          1,
        )}`,
        `${fmt(
          med((r) => r.peakRssMb, 0),
          0,
        )} / ${fmt(
          med((r) => r.peakRssMb, 1),
          0,
        )}`,
        `${Math.max(...pairs.map((p) => p[0].errors))} / ${Math.max(...pairs.map((p) => p[1].errors))}`,
        `${Math.min(...pairs.map((p) => p[0].completed))}/${threads}`,
      ]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: `Concurrency: 20-step plans, SqliteSaver on a file, one compiled graph (median of ${runs}${quick ? "" : "; 3 at 1,000 threads"}, each contender in its own process)`,
    head: [
      "threads",
      "manager steps/s",
      "bare steps/s",
      "throughput ratio bare/manager",
      "manager p50/p99 ms",
      "bare p50/p99 ms",
      "peak RSS MB manager/bare",
      "errors manager/bare",
      "manager runs completed",
    ],
    rows,
    note: "Step latency: time between consecutive tool calls of one thread (includes waiting for the event loop under load).",
  };
}
