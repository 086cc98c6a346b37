/**
 * Long runs (docs/decisions/0030-long-runs-per-step-cost.md): a rolling-horizon goal of 1,000 and
 * 5,000 steps (README "Long goals: a rolling horizon"), planned ten steps ahead, every step
 * producing one fact. Per-step work must not grow with the steps already run: the time of the
 * last 500 steps is compared with the first 500 of the same run.
 *
 * The tool notes the time of each call, so a block of 500 steps is timed from its first call to
 * the next block's first call: everything in between (records, facts, routes, checkpoints,
 * extensions) is the library's and LangGraph's per-step work. The gaps between calls also split
 * it: a gap inside a batch of ten is one step's work; a gap across batches adds an extension.
 */
import { tool } from "@langchain/core/tools";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { z } from "zod";
import type { PlanDraft } from "../src/index.js";
import { fmt, median, type Table } from "./lib.js";

export type Api = typeof import("../src/index.js");

export const BLOCK = 500;
/** Steps each draft plans ahead: the horizon of the issue this bench pins. */
export const AHEAD = 10;

export interface LongRunResult {
  steps: number;
  totalMs: number;
  /** Milliseconds of each block of `BLOCK` steps, in order. */
  blocks: number[];
  /** Median gap between two calls of one batch (one step's work), first and last block. */
  stepMs: [number, number];
  /** Median gap across batches minus a step's (one extension's work), first and last block. */
  extensionMs: [number, number];
}

/**
 * The rolling-horizon plan manager of a `total`-step goal on `saver`, and the times its tool was
 * called (bench/mcp.ts serves it through the planning service).
 */
export function longRunGraph(api: Api, total: number, saver: BaseCheckpointSaver) {
  const calls: number[] = [];
  const work = tool(
    async (args: Record<string, unknown>) => {
      calls.push(performance.now());
      return args;
    },
    { name: "work", description: "returns its arguments", schema: z.object({}).passthrough() },
  );
  const step = (n: number) => ({
    id: `s${n}`,
    goal: `Step ${n}`,
    tool: "work",
    args: { [`r${n}`]: n },
    produces: [`r${n}`],
    ...(n > 1 ? { dependsOn: [`s${n - 1}`] } : {}),
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
  return { graph, calls };
}

/** One run of `total` steps on a fresh thread; the block times come from the tool's own clock. */
export async function longRun(
  api: Api,
  total: number,
  saver: BaseCheckpointSaver = new MemorySaver(),
  threadId = `long-${total}`,
): Promise<LongRunResult> {
  const { graph, calls } = longRunGraph(api, total, saver);
  const started = performance.now();
  const out = (await graph.invoke({ goal: "a long goal" } as never, {
    configurable: { thread_id: threadId },
  })) as { status: string };
  const totalMs = performance.now() - started;
  if (out.status !== "completed" || calls.length !== total)
    throw new Error(`long run of ${total} steps ended ${out.status} after ${calls.length} calls`);
  calls.push(started + totalMs);
  const blocks: number[] = [];
  for (let i = 0; i + BLOCK < calls.length; i += BLOCK) blocks.push(calls[i + BLOCK]! - calls[i]!);
  // Gap g is between calls g and g + 1 (steps g + 1 and g + 2); it crosses batches when step g + 2 opens one.
  const gaps = (from: number, across: boolean) => {
    const found: number[] = [];
    for (let g = from; g < from + BLOCK - 1 && g + 1 < total; g++)
      if (((g + 1) % AHEAD === 0) === across) found.push(calls[g + 1]! - calls[g]!);
    return median(found);
  };
  const last = total - BLOCK;
  const stepMs: [number, number] = [gaps(0, false), gaps(last, false)];
  const extensionMs: [number, number] = [gaps(0, true) - stepMs[0], gaps(last, true) - stepMs[1]];
  return { steps: total, totalMs, blocks, stepMs, extensionMs };
}

export function longRunRow(label: string, r: LongRunResult): (string | number)[] {
  const first = r.blocks[0]!;
  const last = r.blocks.at(-1)!;
  const ratio = last / first;
  return [
    label,
    r.steps,
    fmt(r.totalMs / 1000, 1),
    fmt(first / 1000, 2),
    fmt(last / 1000, 2),
    fmt(ratio),
    ratio <= 1.3 ? "yes" : "NO",
    `${fmt(r.stepMs[0])} → ${fmt(r.stepMs[1])}`,
    `${fmt(r.extensionMs[0], 1)} → ${fmt(r.extensionMs[1], 1)}`,
  ];
}

export const LONG_RUN_HEAD = [
  "checkpointer",
  "steps",
  "total s",
  "first 500 s",
  "last 500 s",
  "last / first",
  "≤ 1.3",
  "ms per step (first → last 500)",
  "ms per extension (first → last 500)",
];

export async function longRuns(quick: boolean): Promise<Table> {
  const api = (await import("../src/index.js")) as Api;
  // A short warm-up, so the first block does not pay for compiling the library's code.
  await longRun(api, BLOCK);
  const rows: (string | number)[][] = [];
  for (const n of quick ? [1_000] : [1_000, 5_000]) rows.push(longRunRow("MemorySaver", await longRun(api, n)));
  return {
    title: `Long rolling-horizon runs: time per ${BLOCK} steps, first against last (planned ${AHEAD} ahead)`,
    head: LONG_RUN_HEAD,
    rows,
    note:
      `A goal of N chained steps, each producing one fact, planned ${AHEAD} steps at a time by Planner.extend. ` +
      `A block is timed by the tool's own clock from its first call to the next block's first call. ` +
      "Flat per-step work keeps last / first near 1 (docs/decisions/0030-long-runs-per-step-cost.md). " +
      "The last two columns split a block: the median gap between two calls of one batch is a step's work; " +
      "the median gap across batches, less a step's, is an extension's. An extension writes only the steps it appends; " +
      "what still grows with the plan is its replan record and history entry, which list every step and fact.",
  };
}
