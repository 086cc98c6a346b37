/**
 * Long runs (docs/decisions/0030-long-runs-per-step-cost.md, docs/decisions/0050-compact-extension-records.md): a
 * rolling-horizon goal of 5,000 steps (README "Long goals: a rolling horizon"), planned ten steps
 * ahead, every step producing one fact, on SqliteSaver and MemorySaver. Per-step work and storage
 * must not grow with the steps already run: the last 500 steps are compared with the first 500 of
 * the same run.
 *
 * The tool notes, at each call, the process's CPU time and the bytes the checkpointer has
 * serialised so far (its serde counts them), so a block of 500 steps runs from its first call to
 * the next block's first call: everything in between (records, facts, routes, checkpoints,
 * extensions) is the library's and LangGraph's per-step work. CPU time, not wall time, so a
 * loaded machine's waits do not count.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "@langchain/core/tools";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { z } from "zod";
import type { PlanDraft } from "../src/index.js";
import { fmt, type Table } from "./lib.js";

export type Api = typeof import("../src/index.js");

export const BLOCK = 500;
/** Steps each draft plans ahead: the horizon of the issue this bench pins. */
export const AHEAD = 10;
/** The floors every run must meet (docs/decisions/0050-compact-extension-records.md). */
export const FLOORS = { cpu: 1.3, bytes: 1.3, stateMB: 5 };

export interface LongRunOptions {
  /** Every `sideEffectEvery`-th step names a side effect (keyed, journaled). */
  sideEffectEvery?: number;
}

export interface LongRunResult {
  steps: number;
  totalMs: number;
  /** CPU milliseconds of each block of `BLOCK` steps, in order. */
  cpuBlocks: number[];
  /** Checkpoint bytes per step of each block, in order. */
  byteBlocks: number[];
  /** JSON bytes of the final state. */
  stateBytes: number;
  /** The delta channels' full snapshots (not in `byteBlocks`). */
  snapshots: Written["snapshots"];
}

/**
 * One serialised value this large is a delta channel's periodic full snapshot (every
 * `SNAPSHOT_EVERY` updates, docs/decisions/0011-checkpoint-storage-delta-channels.md), not a step's
 * write: counted apart, so a block's bytes per step are what each step writes.
 */
export const SNAPSHOT_BYTES = 256 * 1024;

interface Written {
  /** Bytes of every value serialised but the snapshots. */
  total: number;
  /** Each full snapshot: its bytes and how many tool calls had been made when it was written. */
  snapshots: { bytes: number; afterCalls: number }[];
}

/** Counts the bytes `saver` serialises: every checkpoint, its metadata and every pending write goes through its serde. */
function countBytes(saver: BaseCheckpointSaver, calls: readonly number[]): Written {
  const count: Written = { total: 0, snapshots: [] };
  const serde = saver.serde;
  saver.serde = {
    loadsTyped: (type: string, data: Uint8Array | string) => serde.loadsTyped(type, data),
    dumpsTyped: async (value: unknown) => {
      const out = await serde.dumpsTyped(value);
      const bytes = typeof out[1] === "string" ? Buffer.byteLength(out[1]) : out[1].byteLength;
      if (bytes >= SNAPSHOT_BYTES) count.snapshots.push({ bytes, afterCalls: calls.length });
      else count.total += bytes;
      return out;
    },
  };
  return count;
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/**
 * The rolling-horizon plan manager of a `total`-step goal on `saver`, and what its tool saw at each call
 * (bench/mcp.ts serves it through the planning service).
 */
export function longRunGraph(api: Api, total: number, saver: BaseCheckpointSaver, options: LongRunOptions = {}) {
  const calls: number[] = [];
  const cpu: number[] = [];
  const bytes: number[] = [];
  const written = countBytes(saver, calls);
  const work = tool(
    async (args: Record<string, unknown>) => {
      calls.push(performance.now());
      cpu.push(cpuMs());
      bytes.push(written.total);
      return args;
    },
    { name: "work", description: "returns its arguments", schema: z.object({}).passthrough() },
  );
  const every = options.sideEffectEvery;
  const step = (n: number) => ({
    id: `s${n}`,
    goal: `Step ${n}`,
    tool: "work",
    args: { [`r${n}`]: n },
    produces: [`r${n}`],
    ...(n > 1 ? { dependsOn: [`s${n - 1}`] } : {}),
    ...(every !== undefined && n % every === 0 ? { sideEffects: ["ledger"], idempotent: false } : {}),
  });
  const batch = (from: number): PlanDraft => {
    const to = Math.min(total, from + AHEAD - 1);
    return { steps: Array.from({ length: to - from + 1 }, (_, i) => step(from + i)), complete: to === total };
  };
  const graph = api
    .createPlanManager({
      tools: [work],
      planner: api.staticPlanner({ plan: batch(1), extend: (req) => batch(req.plan.steps.length + 1) }),
      policy: { maxExtensions: Math.ceil(total / AHEAD) },
      recursionLimit: 1_000_000,
    })
    .compile({ checkpointer: saver });
  return { graph, calls, cpu, bytes, written };
}

/** One run of `total` steps on a fresh thread; the blocks come from what the tool saw at each call. */
export async function longRun(
  api: Api,
  total: number,
  saver: BaseCheckpointSaver = new MemorySaver(),
  threadId = `long-${total}`,
  options: LongRunOptions = {},
): Promise<LongRunResult> {
  const { graph, calls, cpu, bytes, written } = longRunGraph(api, total, saver, options);
  const started = performance.now();
  const config = { configurable: { thread_id: threadId } };
  const out = (await graph.invoke({ goal: "a long goal" } as never, config)) as { status: string };
  const totalMs = performance.now() - started;
  if (out.status !== "completed" || calls.length !== total)
    throw new Error(`long run of ${total} steps ended ${out.status} after ${calls.length} calls`);
  cpu.push(cpuMs());
  bytes.push(written.total);
  const cpuBlocks: number[] = [];
  const byteBlocks: number[] = [];
  for (let i = 0; i + BLOCK < cpu.length; i += BLOCK) {
    cpuBlocks.push(cpu[i + BLOCK]! - cpu[i]!);
    byteBlocks.push((bytes[i + BLOCK]! - bytes[i]!) / BLOCK);
  }
  const stateBytes = Buffer.byteLength(JSON.stringify((await graph.getState(config)).values));
  return { steps: total, totalMs, cpuBlocks, byteBlocks, stateBytes, snapshots: written.snapshots };
}

export function longRunRow(label: string, run: number, r: LongRunResult): (string | number)[] {
  const cpu = r.cpuBlocks.at(-1)! / r.cpuBlocks[0]!;
  const bytes = r.byteBlocks.at(-1)! / r.byteBlocks[0]!;
  const mb = r.stateBytes / 1e6;
  const met = cpu <= FLOORS.cpu && bytes <= FLOORS.bytes && mb <= FLOORS.stateMB;
  return [
    label,
    run,
    r.steps,
    fmt(r.totalMs / 1000, 1),
    `${fmt(r.cpuBlocks[0]! / 1000)} → ${fmt(r.cpuBlocks.at(-1)! / 1000)}`,
    fmt(cpu),
    `${fmt(r.byteBlocks[0]! / 1024, 1)} → ${fmt(r.byteBlocks.at(-1)! / 1024, 1)}`,
    fmt(bytes),
    r.snapshots.map((x) => `${fmt(x.bytes / 1e6)} MB @ ${x.afterCalls}`).join(", ") || "—",
    fmt(mb),
    met ? "yes" : "NO",
  ];
}

export const LONG_RUN_HEAD = [
  "checkpointer",
  "run",
  "steps",
  "total s",
  `CPU s, first → last ${BLOCK}`,
  "CPU last / first",
  "KB per step, first → last",
  "bytes last / first",
  "full snapshots (MB @ step)",
  "state MB",
  `floors (${FLOORS.cpu}, ${FLOORS.bytes}, ${FLOORS.stateMB} MB)`,
];

interface Case {
  label: string;
  saver: (dir: string, i: number) => { saver: BaseCheckpointSaver; close: () => void };
  runs: number;
  options?: LongRunOptions;
}

const sqlite = (dir: string, i: number) => {
  const saver = SqliteSaver.fromConnString(join(dir, `long-${i}.sqlite`));
  return { saver, close: () => saver.db.close() };
};
const memory = () => ({ saver: new MemorySaver(), close: () => {} });

export async function longRuns(quick: boolean): Promise<Table> {
  const api = (await import("../src/index.js")) as Api;
  const steps = quick ? 1_000 : 5_000;
  const runs = quick ? 1 : 3;
  // A short warm-up, so the first block does not pay for compiling the library's code.
  await longRun(api, BLOCK);
  const cases: Case[] = [
    { label: "SQLite", saver: sqlite, runs },
    { label: "MemorySaver", saver: memory, runs },
    { label: "SQLite, side effect every 10 steps", saver: sqlite, runs: 1, options: { sideEffectEvery: 10 } },
  ];
  const dir = mkdtempSync(join(tmpdir(), "bench-long-"));
  const rows: (string | number)[][] = [];
  let n = 0;
  try {
    for (const c of cases)
      for (let run = 1; run <= c.runs; run++) {
        const { saver, close } = c.saver(dir, (n += 1));
        try {
          rows.push(longRunRow(c.label, run, await longRun(api, steps, saver, `long-${n}`, c.options ?? {})));
        } finally {
          close();
        }
        console.log(rows.at(-1)!.join(" | "));
      }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return longRunTable(rows);
}

/** The table of the long runs' rows; `how` says how they were run when not one after another in one process. */
export function longRunTable(rows: (string | number)[][], how = ""): Table {
  return {
    title: `Long rolling-horizon runs: CPU and checkpoint bytes per ${BLOCK} steps, first against last (planned ${AHEAD} ahead)`,
    head: LONG_RUN_HEAD,
    rows,
    note:
      `A goal of N chained steps, each producing one fact, planned ${AHEAD} steps at a time by Planner.extend; every run ` +
      `is listed, not the best. ${how}A block runs from the tool's call at its first step to its call at the next block's first. ` +
      "CPU is the process's user + system time; bytes are what the checkpointer's serde wrote (checkpoints, metadata, " +
      "pending writes), less the delta channels' periodic full snapshots (one value of 256 KB or more; every " +
      "5,000 supersteps, docs/decisions/0011-checkpoint-storage-delta-channels.md), listed in their own column: a " +
      "snapshot costs the whole state once, wherever it falls. The state is the final state's JSON. Flat per-step work keeps both ratios near 1 " +
      "(docs/decisions/0050-compact-extension-records.md): an extension's record and history entry hold what it " +
      "added, not what it kept.",
  };
}
