/**
 * Workers on PostgreSQL (docs/architecture.md "What runs where"): steps per second with 1, 2 and 4 worker processes (4
 * threads each) against one process running the same threads with `invoke` (4 at a time), and
 * the time from a worker's death to its threads' next tool call on another worker.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { startPostgres } from "../test-reliability/helpers/postgres.js";
import { openQueue } from "../src/worker/index.js";
import { fmt, median, type Table } from "./lib.js";

const script = resolve(import.meta.dirname, "workers-process.ts");
/** The lease for the death measurement; throughput runs use a longer one, as production would. */
const LEASE_S = 5;
const THROUGHPUT_LEASE_S = 60;

interface Proc {
  child: ChildProcess;
  calls: { thread: string; at: number }[];
  ready: Promise<void>;
  done: Promise<string>;
}

function start(args: string[]): Proc {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], { stdio: ["ignore", "pipe", "ignore"] });
  const calls: Proc["calls"] = [];
  let out = "";
  let ready!: () => void;
  const readyP = new Promise<void>((r) => (ready = r));
  child.stdout!.on("data", (d) => {
    out += String(d);
    const lines = out.split("\n");
    out = lines.pop()!;
    for (const line of lines) {
      const [kind, thread, at] = line.split(" ");
      if (kind === "call") calls.push({ thread: thread!, at: Number(at) });
      if (kind === "ready") ready();
      if (kind === "elapsed") all += line;
    }
  });
  let all = "";
  const done = new Promise<string>((r) => child.on("exit", () => r(all)));
  return { child, calls, ready: readyP, done };
}

async function drain(queue: Awaited<ReturnType<typeof openQueue>>, threads: Set<string>) {
  const finished = new Set<string>();
  while (finished.size < threads.size) {
    const report = await queue.nextFinished();
    if (!report) await new Promise((r) => setTimeout(r, 50));
    else if (threads.has(report.threadId) && !report.parked) finished.add(report.threadId);
  }
}

async function workersRun(url: string, processes: number, threads: number, steps: number, tag: string) {
  const queue = await openQueue(url, { leaseSeconds: THROUGHPUT_LEASE_S, queue: `bench-${tag}` });
  const procs = Array.from({ length: processes }, () =>
    start(["worker", url, "4", String(THROUGHPUT_LEASE_S), `bench-${tag}`]),
  );
  await Promise.all(procs.map((p) => p.ready));
  const ids = new Set(Array.from({ length: threads }, (_, i) => `${tag}-${i}`));
  const started = performance.now();
  for (const id of ids) await queue.enqueueRun(id, { goal: `chain ${steps}` });
  await drain(queue, ids);
  const elapsed = performance.now() - started;
  for (const p of procs) p.child.kill("SIGTERM");
  await Promise.all(procs.map((p) => p.done));
  await queue.close();
  return (threads * steps) / (elapsed / 1000);
}

/** Kills one of two workers mid-run; returns seconds from the kill to each orphaned thread's next call. */
async function deathToRunning(url: string, steps: number) {
  const queue = await openQueue(url, { leaseSeconds: LEASE_S });
  const [victim, other] = [start(["worker", url, "4", String(LEASE_S)]), start(["worker", url, "4", String(LEASE_S)])];
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

export async function workers(quick: boolean): Promise<Table> {
  const threads = quick ? 16 : 48;
  const steps = 10;
  const pg = await startPostgres();
  try {
    const direct = start(["direct", pg.url, "4", String(threads), String(steps)]);
    const elapsed = Number((await direct.done).split(" ")[1]);
    const baseline = (threads * steps) / (elapsed / 1000);
    const rows: (string | number)[][] = [["one process, invoke (baseline)", 4, fmt(baseline, 1), "1.00"]];
    for (const processes of [1, 2, 4]) {
      const rate = await workersRun(pg.url, processes, threads, steps, `p${processes}`);
      rows.push([
        `${processes} worker process${processes > 1 ? "es" : ""}`,
        4 * processes,
        fmt(rate, 1),
        fmt(rate / baseline),
      ]);
    }
    const restarts = await deathToRunning(pg.url, 40);
    const note =
      `${threads} threads × ${steps} steps, each step a ${20} ms I/O wait; PostgresSaver and pg-boss on one local ` +
      `PostgreSQL 15. Death → running again (lease ${LEASE_S} s, maintenance every 1 s): ` +
      `${restarts.map((r) => fmt(r, 1)).join(", ")} s for the ${restarts.length} threads the killed worker held ` +
      `(median ${fmt(median(restarts), 1)} s).`;
    return {
      title: "Workers on PostgreSQL (steps per second)",
      note,
      head: ["setup", "threads at once", "steps/s", "vs one process"],
      rows,
    };
  } finally {
    pg.stop();
  }
}
