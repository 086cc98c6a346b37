/**
 * Overhead per step on the success path: the manager against a bare LangGraph chain calling the
 * same no-op tool, both keeping a checkpoint after every step with the same checkpointer.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { bareGraph, managerGraph } from "./fixtures.js";
import { fmt, median, repeat, type Table } from "./lib.js";

let thread = 0;

async function timeRun(
  graph: { invoke: (input: never, config: object) => Promise<unknown> },
  input: unknown,
): Promise<number> {
  const started = performance.now();
  await graph.invoke(input as never, { configurable: { thread_id: `t${thread++}` } });
  return performance.now() - started;
}

export async function overhead(quick: boolean): Promise<Table> {
  // One step: the run's fixed cost (planner, one step, finalize) against bare's one superstep.
  const sizes = quick ? [1, 10, 50] : [1, 10, 50, 200];
  const runs = 5;
  const dir = mkdtempSync(join(tmpdir(), "bench-overhead-"));
  const rows: (string | number)[][] = [];
  try {
    const savers: [string, () => BaseCheckpointSaver][] = [
      ["MemorySaver", () => new MemorySaver()],
      ["SqliteSaver (file)", () => SqliteSaver.fromConnString(join(dir, `c${thread++}.sqlite`))],
    ];
    for (const [name, make] of savers) {
      for (const n of sizes) {
        const saver = make();
        const manager = managerGraph(n, saver);
        const bare = bareGraph(n, saver);
        // Pairs run alternately so that machine noise hits both sides alike.
        const pairs = await repeat(
          runs,
          async () => [await timeRun(manager, { goal: "bench" }), await timeRun(bare, {})] as const,
        );
        const m = median(pairs.map((p) => p[0])) / n;
        const b = median(pairs.map((p) => p[1])) / n;
        const ratio = median(pairs.map((p) => p[0] / p[1]));
        rows.push([name, n, fmt(m, 3), fmt(b, 3), fmt(ratio), ratio <= 1.5 ? "yes" : "NO"]);
        if (saver instanceof SqliteSaver) saver.db.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: "Overhead per step on the success path (median of 5 after a warm-up)",
    head: ["checkpointer", "steps", "manager ms/step", "bare ms/step", "ratio", "≤ 1.5"],
    rows,
    note:
      "Both keep a checkpoint after every step; the ratio is the median of per-pair ratios from the same run. " +
      "The 1-step row is a whole run: the manager's fixed cost (planner and finalize supersteps) plus one step, against bare's one superstep. " +
      "Profiled (per-superstep timings from the updates stream, CPU profiles): tool calls cost the same on both sides (~0.33 ms with LangGraph's callbacks); " +
      "a plain routing function is wrapped by LangGraph in a traced RunnableLambda that opened a callback run every superstep — fixed by passing routes as untraced runnables; " +
      "the executor also writes only changed channels and no longer sorts the plan or merges abort signals per step. " +
      "What remains (decision record 0024, CPU profiles): the library's code and zod are 8% of a one-step run and 12% of a 10-step one; " +
      "the rest is LangGraph's per-superstep work — the planner and finalize are two supersteps bare does not have (~3.1x bare's fixed cost), " +
      "and each step pays for its conditional edge's fresh state read and the branch's runnable calls (~1.6x a bare step).",
  };
}
