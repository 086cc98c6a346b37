/**
 * The planning service's reads (src/mcp/service.ts), on SQLite and PostgreSQL: `plan_status` of a
 * 1,000-step run (one checkpoint, not the history), how soon `plan_wait` returns after the run's
 * last step, the first page of `plan_list` over 10,000 threads, and deleting a 1,000-step thread.
 * The 10,000 threads are copies of one finished run's rows, its status row included, made in SQL
 * (running 10,000 runs would time the runs, not the list). The 1,000-step run is driven by the
 * service, which stores its status row when the run returns, as for any plan it runs; reads are
 * cold (a new query each, nothing kept in memory). plan_status is also timed without a row (a plan
 * run without the service, or whose row is stale): `getState`, which rebuilds the delta channels. And what one MCP tool call costs over calling the service directly:
 * `plan_status` of a one-step plan through the SDK's client and server (in-memory transport: the
 * schemas, validation and JSON, not a pipe or a socket) against `service.status`. Every row is
 * measured beside one CPU-bound process (a second Node.js spinning), so the 95th percentile shows a
 * loaded machine, as a service sharing its cores with agents and models has, not only a quiet one.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Client } from "pg";
import { z } from "zod";
import * as api from "../src/index.js";
import { createMcpServer } from "../src/mcp/server.js";
import { PlanService, type ServedGraph } from "../src/mcp/service.js";
import { planStatus } from "../src/mcp/status.js";
import { STATUS_TABLE } from "../src/storage/status-store.js";
import { startPostgres } from "../test-reliability/helpers/postgres.js";
import { fmt, median, percentile, type Table } from "./lib.js";
import { longRunGraph } from "./long-run.js";

/** A latency as the bench reports it: the median and the 95th percentile, ms. */
interface Timing {
  median: number;
  p95: number;
}

const timing = (ms: number[]): Timing => ({ median: median(ms), p95: percentile(ms, 95) });
/** "median (p95)": a loaded machine shows in the tail, not in the median. */
const shown = (t: Timing, digits = 2) => `${fmt(t.median, digits)} (${fmt(t.p95, digits)})`;

function oneStepGraph(saver: BaseCheckpointSaver, gate: { open?: () => void; waiting?: Promise<void> }) {
  const work = tool(
    async () => {
      await gate.waiting;
      return { v: 1 };
    },
    { name: "work", description: "waits for the bench, then returns", schema: z.object({}).passthrough() },
  );
  return api
    .createPlanManager({
      tools: [work],
      planner: api.staticPlanner({ plan: { steps: [{ id: "s0", goal: "one step", tool: "work", produces: ["v"] }] } }),
    })
    .compile({ checkpointer: saver });
}

async function timeStatus(read: () => Promise<{ progress: { done: number } }>, runs: number): Promise<Timing> {
  const ms: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const t0 = performance.now();
    const status = await read();
    if (status.progress.done !== 1000) throw new Error(`expected 1,000 steps done, got ${status.progress.done}`);
    if (i >= 3) ms.push(performance.now() - t0);
  }
  return timing(ms);
}

/**
 * A plan of `total` steps in a chain whose last step's tool tells `gate.entered` and waits for
 * `gate.waiting`: while it waits, the plan is running with its last steps in flight.
 */
function gatedChainGraph(
  saver: BaseCheckpointSaver,
  total: number,
  gate: { entered: () => void; waiting: Promise<void> },
) {
  const work = tool(
    async (args: Record<string, unknown>) => {
      if (`r${total}` in args) {
        gate.entered();
        await gate.waiting;
      }
      return args;
    },
    { name: "work", description: "returns its arguments", schema: z.object({}).passthrough() },
  );
  const steps = Array.from({ length: total }, (_, i) => ({
    id: `s${i + 1}`,
    goal: `Step ${i + 1}`,
    tool: "work",
    args: { [`r${i + 1}`]: i + 1 },
    produces: [`r${i + 1}`],
    ...(i > 0 ? { dependsOn: [`s${i}`] } : {}),
  }));
  // A plan holds at most 200 steps: the chain is planned ten steps ahead and extended (bench/long-run.ts).
  const batch = (from: number) => {
    const to = Math.min(total, from + 9);
    return { steps: steps.slice(from - 1, to), complete: to === total };
  };
  return api
    .createPlanManager({
      tools: [work],
      planner: api.staticPlanner({ plan: batch(1), extend: (req) => batch(req.plan.steps.length + 1) }),
      policy: { maxExtensions: Math.ceil(total / 10) },
      recursionLimit: 1_000_000,
    })
    .compile({ checkpointer: saver });
}

/**
 * `plan_status` of a running 1,000-step plan, `runs` reads while its last step's tool is in its
 * call (the checkpoint then shows 998 steps done: the 999th's success and the 1,000th's start are
 * one superstep).
 */
export async function timeRunningStatus(saver: BaseCheckpointSaver, runs: number): Promise<Timing> {
  let open!: () => void;
  let entered!: () => void;
  const inCall = new Promise<void>((resolve) => (entered = resolve));
  const gate = { entered, waiting: new Promise<void>((resolve) => (open = resolve)) };
  const service = new PlanService({ graphs: { chain: gatedChainGraph(saver, 1000, gate) as ServedGraph }, saver });
  const { plan_id: planId } = await service.create({ goal: "a running long goal" });
  await inCall;
  // The run's last values reach the service just after the tool is called.
  while ((await service.status(planId)).progress.done !== 999) await new Promise((resolve) => setTimeout(resolve, 5));
  const ms: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const t0 = performance.now();
    const status = await service.status(planId);
    if (status.status !== "running" || status.progress.done !== 999 || status.progress.total !== 1000)
      throw new Error(`not running as expected: ${status.status}, ${status.progress.done} done`);
    if (i >= 3) ms.push(performance.now() - t0);
  }
  open();
  if ((await service.wait(planId, 300)).status !== "completed") throw new Error("the running plan did not complete");
  return timing(ms);
}

/** From the last step's tool returning to `plan_wait` returning, for `runs` plans. */
async function timeWait(saver: BaseCheckpointSaver, runs: number): Promise<Timing> {
  const gate: { open?: () => void; waiting?: Promise<void> } = {};
  const service = new PlanService({ graphs: { g: oneStepGraph(saver, gate) as ServedGraph }, saver });
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    gate.waiting = new Promise<void>((resolve) => (gate.open = resolve));
    const { plan_id } = await service.create({ goal: `wait ${i}` });
    const waited = service.wait(plan_id, 60);
    const t0 = performance.now();
    gate.open!();
    const status = await waited;
    if (status.status !== "completed") throw new Error(`plan ended ${status.status}`);
    ms.push(performance.now() - t0);
  }
  return timing(ms);
}

async function timeList(service: PlanService, runs: number): Promise<Timing> {
  const ms: number[] = [];
  for (let i = 0; i < runs + 2; i++) {
    const t0 = performance.now();
    const page = await service.list({ limit: 20 });
    if (page.plans.length !== 20) throw new Error(`first page has ${page.plans.length} plans`);
    if (i >= 2) ms.push(performance.now() - t0);
  }
  return timing(ms);
}

/**
 * Median over pairs of (`plan_status` through an MCP client − the same read through the service),
 * the two taken back to back in alternating order, so the read's own noise cancels pair by pair.
 */
async function timeMcpOverhead(service: PlanService, planId: string, runs: number): Promise<Timing> {
  const server = createMcpServer(service);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new McpClient({ name: "bench", version: "1" });
  await client.connect(clientSide);
  const direct = async () => {
    const t0 = performance.now();
    await service.status(planId);
    return performance.now() - t0;
  };
  const viaMcp = async () => {
    const t0 = performance.now();
    const result = await client.callTool({ name: "plan_status", arguments: { plan_id: planId } });
    if (result.isError) throw new Error(`plan_status over MCP: ${JSON.stringify(result.content)}`);
    return performance.now() - t0;
  };
  const differences: number[] = [];
  try {
    for (let i = 0; i < runs + 3; i++) {
      let m: number, d: number;
      if (i % 2 === 0) {
        m = await viaMcp();
        d = await direct();
      } else {
        d = await direct();
        m = await viaMcp();
      }
      if (i >= 3) differences.push(m - d);
    }
  } finally {
    await client.close();
  }
  return timing(differences);
}

async function timeDelete(service: PlanService, planId: string): Promise<number> {
  const t0 = performance.now();
  await service.delete(planId);
  return performance.now() - t0;
}

/** 10,000 threads in SQLite: copies of thread `from`'s rows under new ids. */
function copySqlite(db: SqliteSaver["db"], from: string, count: number): void {
  const copy = (table: string) => {
    const cols = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
    const select = cols.map((c) => (c === "thread_id" ? "'c' || n || '--g'" : c)).join(", ");
    db.prepare(
      `WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?) ` +
        `INSERT INTO ${table} (${cols.join(", ")}) SELECT ${select} FROM ${table}, seq WHERE thread_id = ?`,
    ).run(count, from);
  };
  copy("checkpoints");
  copy("writes");
  copy(STATUS_TABLE);
}

async function copyPostgres(url: string, from: string, count: number): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    for (const table of ["checkpoints", "checkpoint_blobs", "checkpoint_writes", STATUS_TABLE]) {
      const { rows } = await client.query<{ column_name: string }>(
        "SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position",
        [table],
      );
      const cols = rows.map((r) => r.column_name);
      const select = cols.map((c) => (c === "thread_id" ? "'c' || n || '--g'" : c)).join(", ");
      await client.query(
        `INSERT INTO ${table} (${cols.join(", ")}) SELECT ${select} FROM ${table}, generate_series(1, $1) AS n WHERE thread_id = $2`,
        [count, from],
      );
    }
  } finally {
    await client.end();
  }
}

async function measure(
  label: string,
  saver: BaseCheckpointSaver,
  copy: (from: string, count: number) => Promise<void> | void,
  quick: boolean,
): Promise<(string | number)[]> {
  const long = longRunGraph(api, 1000, saver).graph as ServedGraph;
  const readers = api.createPlanManager({ tools: [], planner: api.staticPlanner({ plan: { steps: [] } }) });
  const service = new PlanService({
    graphs: { g: readers.compile({ checkpointer: saver }) as ServedGraph, long },
    saver,
  });
  const { plan_id: longId } = await service.create({ goal: "a long goal", graph: "long" });
  await service.settled();
  const status = await timeStatus(() => service.status(longId), quick ? 5 : 20);
  const config = { configurable: { thread_id: longId } };
  const fallback = await timeStatus(
    async () => planStatus(longId, "long", await long.getState(config), { running: false }),
    quick ? 5 : 20,
  );
  const running = await timeRunningStatus(saver, quick ? 5 : 20);
  const wait = await timeWait(saver, quick ? 5 : 20);
  const one = await service.create({ goal: "copied" });
  await service.settled();
  const overhead = await timeMcpOverhead(service, one.plan_id, quick ? 20 : 100);
  await copy(one.plan_id, quick ? 1_000 : 10_000);
  const list = await timeList(service, quick ? 3 : 10);
  const deleted = await timeDelete(service, longId);
  return [
    label,
    shown(status),
    shown(running),
    shown(wait),
    shown(list),
    fmt(deleted, 1),
    shown(overhead),
    shown(fallback, 1),
  ];
}

/**
 * Runs `work` with a CPU-bound Node.js process beside it, killed once it is done. The busy process also
 * ends itself once this one is gone (killed, crashed), so it never spins on after the bench.
 */
async function besideBusyProcess<T>(work: () => Promise<T>): Promise<T> {
  const spin = `for (let i = 0; ; i++) if ((i & 0xffffff) === 0 && process.ppid !== ${process.pid}) process.exit(0);`;
  const busy = spawn(process.execPath, ["-e", spin], { stdio: "ignore" });
  busy.on("error", (error) => console.error(`the CPU-bound process did not start: ${error.message}`));
  try {
    return await work();
  } finally {
    busy.kill("SIGKILL");
  }
}

/** The rows of both savers: SQLite in a temporary folder, then a throwaway PostgreSQL. */
async function measureBoth(quick: boolean): Promise<(string | number)[][]> {
  const dir = mkdtempSync(join(tmpdir(), "bench-mcp-"));
  const server = await startPostgres();
  const rows: (string | number)[][] = [];
  try {
    const sqlite = SqliteSaver.fromConnString(join(dir, "plans.sqlite"));
    rows.push(await measure("SQLite", sqlite, (from, n) => copySqlite(sqlite.db, from, n), quick));
    const postgres = PostgresSaver.fromConnString(server.url);
    await postgres.setup();
    rows.push(await measure("PostgreSQL", postgres, (from, n) => copyPostgres(server.url, from, n), quick));
    await postgres.end();
  } finally {
    server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

export async function mcpService(quick: boolean): Promise<Table> {
  const rows = await besideBusyProcess(() => measureBoth(quick));
  return {
    title: "The planning service (MCP): reads, wait and delete",
    note:
      `Median ms, the 95th percentile in brackets. plan_status of a 1,000-step run (target ≤ 20 ms), ended and ` +
      `running (its last step in its tool call); plan_wait: from the last step's tool returning ` +
      `to the wait returning (≤ 50 ms); plan_list: first page of 20 over ${quick ? "1,000" : "10,000"} threads ` +
      "(≤ 100 ms); delete of the 1,000-step thread (≤ 1,000 ms); one MCP tool call (plan_status of a one-step " +
      "plan, SDK client and server over an in-memory transport) minus the same call to the service; plan_status " +
      "of the 1,000-step run from its checkpoint, as without a status row. Measured beside a CPU-bound process " +
      `(a second Node.js spinning, started by the bench) on a machine of ${cpus().length} cores shared with other ` +
      `work: load average ${loadavg()[1]!.toFixed(1)} over the last 5 minutes at the end.`,
    head: [
      "saver",
      "plan_status ms",
      "plan_status running ms",
      "plan_wait after end ms",
      "plan_list page ms",
      "delete 1,000-step thread ms",
      "MCP call overhead ms",
      "plan_status without a row ms",
    ],
    rows,
  };
}
