/**
 * Workers on PostgreSQL (docs/architecture.md "What runs where"): with 20 ms tools, steps per second and CPU per step (Node and PostgreSQL)
 * of one worker process with 4 lanes against one process running the same threads with `invoke`,
 * 4 at a time (pairs run back to back, ratio per pair, median of the pairs); with 200 ms tools,
 * 1, 2 and 4 worker processes against one; and the time from a worker's death to its threads'
 * next tool call on another worker.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { startPostgres } from "../test-reliability/helpers/postgres.js";
import { openQueue } from "../src/worker/index.js";
import { fmt, median, type Table } from "./lib.js";

const script = resolve(import.meta.dirname, "workers-process.ts");
/**
 * The lease and pg-boss maintenance interval for the death measurement; throughput runs use a longer
 * lease and pg-boss's default maintenance (10 s), as production would.
 */
const LEASE_S = 5;
const THROUGHPUT_LEASE_S = 60;
const STEPS = 10;

interface Proc {
  child: ChildProcess;
  calls: { thread: string; at: number }[];
  ready: Promise<void>;
  /** Resolves with the `elapsed` line (direct mode), the CPU time the process reported, PostgreSQL's then. */
  done: Promise<Report>;
}

interface Report {
  elapsed: number;
  cpuMs: number;
  pgAtEnd: number;
}

function start(args: string[], onReady: () => void = () => undefined): Proc {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], { stdio: ["ignore", "pipe", "ignore"] });
  const calls: Proc["calls"] = [];
  let out = "";
  let ready!: () => void;
  const readyP = new Promise<void>((r) => (ready = r));
  const result: Report = { elapsed: Number.NaN, cpuMs: Number.NaN, pgAtEnd: Number.NaN };
  child.stdout!.on("data", (d) => {
    out += String(d);
    const lines = out.split("\n");
    out = lines.pop()!;
    for (const line of lines) {
      const [kind, x, y] = line.split(" ");
      if (kind === "call") calls.push({ thread: x!, at: Number(y) });
      if (kind === "ready") {
        onReady();
        ready();
      }
      if (kind === "cpu") result.cpuMs = Number(x);
      if (kind === "elapsed") Object.assign(result, { elapsed: Number(x), cpuMs: Number(y), pgAtEnd: pgCpu.read() });
    }
  });
  const done = new Promise<Report>((r) => child.on("exit", () => r(result)));
  return { child, calls, ready: readyP, done };
}

/**
 * PostgreSQL's CPU time (ms): the postmaster's own and its reaped children's, plus every live
 * backend's, from /proc. Backends that exit are added to the postmaster's children time.
 */
const pgCpu = {
  port: 0,
  read(): number {
    const ticks = (pid: string, withChildren: boolean) => {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const v = stat
        .slice(stat.lastIndexOf(")") + 2)
        .split(" ")
        .map(Number);
      // Fields after the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
      return v[11]! + v[12]! + (withChildren ? v[13]! + v[14]! : 0);
    };
    let postmaster: string | undefined;
    const parents = new Map<string, string>();
    for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
        const args = cmd.split("\0");
        if (args[0]?.endsWith("postgres") && args[args.indexOf("-p") + 1] === String(this.port)) postmaster = pid;
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        parents.set(pid, stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]!);
      } catch {
        // The process ended while we looked.
      }
    }
    if (!postmaster) return Number.NaN;
    let total = ticks(postmaster, true);
    for (const [pid, ppid] of parents) {
      try {
        if (ppid === postmaster) total += ticks(pid, false);
      } catch {
        // Ended meanwhile: its time is in the postmaster's children time now.
      }
    }
    return total * 10; // 100 ticks per second
  },
};

async function drain(queue: Awaited<ReturnType<typeof openQueue>>, threads: Set<string>) {
  const finished = new Set<string>();
  while (finished.size < threads.size) {
    const report = await queue.nextFinished();
    // Every 50 ms: this poll's PostgreSQL time is counted against the workers.
    if (!report) await new Promise((r) => setTimeout(r, 50));
    else if (threads.has(report.threadId) && !report.parked) finished.add(report.threadId);
  }
}

interface Measured {
  stepsPerSecond: number;
  nodeMsPerStep: number;
  pgMsPerStep: number;
}

async function direct(url: string, threads: number, toolMs: number): Promise<Measured> {
  let pgBefore = 0;
  const proc = start(["direct", url, "4", String(threads), String(STEPS), String(toolMs)], () => {
    pgBefore = pgCpu.read();
  });
  const r = await proc.done;
  const steps = threads * STEPS;
  return {
    stepsPerSecond: steps / (r.elapsed / 1000),
    nodeMsPerStep: r.cpuMs / steps,
    pgMsPerStep: (r.pgAtEnd - pgBefore) / steps,
  };
}

async function workersRun(url: string, processes: number, threads: number, toolMs: number, tag: string) {
  const queue = await openQueue(url, { leaseSeconds: THROUGHPUT_LEASE_S, queue: `bench-${tag}` });
  const procs = Array.from({ length: processes }, () =>
    start(["worker", url, "4", String(THROUGHPUT_LEASE_S), `bench-${tag}`, String(toolMs), "10"]),
  );
  await Promise.all(procs.map((p) => p.ready));
  const ids = new Set(Array.from({ length: threads }, (_, i) => `${tag}-${i}`));
  const pgBefore = pgCpu.read();
  const started = performance.now();
  for (const id of ids) await queue.enqueueRun(id, { goal: `chain ${STEPS}` });
  await drain(queue, ids);
  const elapsed = performance.now() - started;
  const pgMs = pgCpu.read() - pgBefore;
  for (const p of procs) p.child.kill("SIGTERM");
  const node = (await Promise.all(procs.map((p) => p.done))).reduce((sum, r) => sum + r.cpuMs, 0);
  await queue.close();
  const steps = threads * STEPS;
  return { stepsPerSecond: steps / (elapsed / 1000), nodeMsPerStep: node / steps, pgMsPerStep: pgMs / steps };
}

/** Kills one of two workers mid-run; returns seconds from the kill to each orphaned thread's next call. */
async function deathToRunning(url: string, steps: number) {
  const queue = await openQueue(url, { leaseSeconds: LEASE_S, queue: "bench-death" });
  const args = ["worker", url, "4", String(LEASE_S), "bench-death", "20", "1"];
  const [victim, other] = [start(args), start(args)];
  await Promise.all([victim!.ready, other!.ready]);
  const ids = new Set(Array.from({ length: 8 }, (_, i) => `death-${i}`));
  for (const id of ids) await queue.enqueueRun(id, { goal: `chain ${steps}` });
  while (victim!.calls.length < 12) await new Promise((r) => setTimeout(r, 20));
  const killedAt = Date.now();
  victim!.child.kill("SIGKILL");
  const held = [...new Set(victim!.calls.filter((c) => c.at > killedAt - 1_000).map((c) => c.thread))];
  await drain(queue, ids);
  other!.child.kill("SIGTERM");
  await other!.done;
  await queue.close();
  return held.map(
    (t) =>
      (Math.min(...other!.calls.filter((c) => c.thread === t && c.at >= killedAt).map((c) => c.at)) - killedAt) / 1000,
  );
}

const row = (name: string, lanes: number, m: Measured, ratio: number) => [
  name,
  lanes,
  fmt(m.stepsPerSecond, 1),
  fmt(ratio),
  fmt(m.nodeMsPerStep, 1),
  fmt(m.pgMsPerStep, 1),
  fmt(m.nodeMsPerStep + m.pgMsPerStep, 1),
];

const medianOf = (ms: Measured[]): Measured => ({
  stepsPerSecond: median(ms.map((m) => m.stepsPerSecond)),
  nodeMsPerStep: median(ms.map((m) => m.nodeMsPerStep)),
  pgMsPerStep: median(ms.map((m) => m.pgMsPerStep)),
});

export async function workers(quick: boolean): Promise<Table> {
  const pairs = quick ? 2 : 5;
  const threads = quick ? 16 : 48;
  const slowThreads = quick ? 16 : 64;
  const pg = await startPostgres();
  pgCpu.port = Number(new URL(pg.url).port);
  try {
    const baseline: Measured[] = [];
    const one: Measured[] = [];
    const ratios: number[] = [];
    for (let i = 0; i < pairs; i++) {
      baseline.push(await direct(pg.url, threads, 20));
      one.push(await workersRun(pg.url, 1, threads, 20, `fast${i}`));
      ratios.push(one.at(-1)!.stepsPerSecond / baseline.at(-1)!.stepsPerSecond);
    }
    const base = medianOf(baseline);
    const rows = [
      row("20 ms tools: one process, invoke (baseline)", 4, base, 1),
      row("20 ms tools: 1 worker process", 4, medianOf(one), median(ratios)),
    ];
    const slow: Measured[] = [];
    for (const processes of [1, 2, 4]) {
      slow.push(await workersRun(pg.url, processes, slowThreads, 200, `slow${processes}`));
      const name = `200 ms tools: ${processes} worker process${processes > 1 ? "es" : ""} (vs 1 process)`;
      rows.push(row(name, 4 * processes, slow.at(-1)!, slow.at(-1)!.stepsPerSecond / slow[0]!.stepsPerSecond));
    }
    const restarts = await deathToRunning(pg.url, 40);
    const note =
      `20 ms tools: ${threads} threads × ${STEPS} steps, ${pairs} pairs (invoke, then worker) back to back; ` +
      `medians, the ratio per pair (pairs: ${ratios.map((r) => fmt(r)).join(", ")}). ` +
      `200 ms tools: ${slowThreads} threads × ${STEPS} steps, once each. CPU per step: the processes' own ` +
      `(Node) and the PostgreSQL server's (all backends), over the run. PostgresSaver and pg-boss on one local ` +
      `PostgreSQL 15. Death → running again (lease ${LEASE_S} s, maintenance every 1 s): ` +
      `${restarts.map((r) => fmt(r, 1)).join(", ")} s for the ${restarts.length} threads the killed worker held ` +
      `(median ${fmt(median(restarts), 1)} s).`;
    return {
      title: "Workers on PostgreSQL (steps per second, CPU ms per step)",
      note,
      head: ["setup", "lanes", "steps/s", "ratio", "Node ms/step", "PostgreSQL ms/step", "CPU ms/step"],
      rows,
    };
  } finally {
    pg.stop();
  }
}
