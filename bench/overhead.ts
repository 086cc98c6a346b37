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

async function timeRun(graph: { invoke: (input: never, config: object) => Promise<unknown> }, input: unknown): Promise<number> {
  const started = performance.now();
  await graph.invoke(input as never, { configurable: { thread_id: `t${thread++}` } });
  return performance.now() - started;
}

export async function overhead(quick: boolean): Promise<Table> {
  const sizes = quick ? [10, 50] : [10, 50, 200];
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
        const pairs = await repeat(runs, async () => [await timeRun(manager, { goal: "bench" }), await timeRun(bare, {})] as const);
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
      "Profiled: the manager pays two fixed supersteps per run (planner, finalize: about 2.9 ms more than bare for the first superstep) and about 0.3 ms of bookkeeping per step in the executor (tool calls cost the same on both sides: about 0.33 ms each with LangGraph's callbacks); " +
      "channel count and conditional edges measured no difference. Fixed: the executor writes only changed channels, no longer sorts the plan or merges abort signals per step. At 10 steps the fixed supersteps keep the ratio just above 1.5.",
  };
}
