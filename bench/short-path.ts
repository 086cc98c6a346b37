/**
 * The short path: a 50-step chain on MemorySaver, the manager against bare LangGraph calling the
 * same no-op tool, in alternating runs; the median of the pairwise per-step ratios. A suite of
 * `npm run bench -- --only=short`; run on its own (`[pairs]`, default 40) it prints the ratio, and under
 * `node --cpu-prof` shows where the manager's time goes (docs/decisions/0059-short-path.md):
 *   nice node --import tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/short-path.ts [pairs]
 */
import { pathToFileURL } from "node:url";
import { MemorySaver } from "@langchain/langgraph";
import { bareGraph, managerGraph } from "./fixtures.js";
import { fmt, median, type Table } from "./lib.js";

const STEPS = 50;
let thread = 0;

async function timed(graph: { invoke: (input: never, config: object) => Promise<unknown> }, input: unknown) {
  const started = performance.now();
  await graph.invoke(input as never, { configurable: { thread_id: `t${(thread += 1)}` } });
  return performance.now() - started;
}

/** Per-pair times of `pairs` alternating runs (manager first), after five warm-up pairs. */
async function measure(pairs: number): Promise<{ manager: number[]; bare: number[] }> {
  const manager = managerGraph(STEPS, new MemorySaver());
  const bare = bareGraph(STEPS, new MemorySaver());
  for (let i = 0; i < 5; i++) await Promise.all([timed(manager, { goal: "chain" }), timed(bare, {})]);
  const out = { manager: [] as number[], bare: [] as number[] };
  for (let i = 0; i < pairs; i++) {
    out.manager.push(await timed(manager, { goal: "chain" }));
    out.bare.push(await timed(bare, {}));
  }
  return out;
}

export async function shortPath(quick: boolean): Promise<Table> {
  const pairs = quick ? 15 : 40;
  const { manager, bare } = await measure(pairs);
  const ratio = median(manager.map((m, i) => m / bare[i]!));
  return {
    title: `The short path: ${STEPS} steps on MemorySaver, manager against bare LangGraph (median of ${pairs} alternating pairs)`,
    head: ["steps", "manager ms/step", "bare ms/step", "ratio", "≤ 1.5"],
    rows: [
      [STEPS, fmt(median(manager) / STEPS, 3), fmt(median(bare) / STEPS, 3), fmt(ratio), ratio <= 1.5 ? "yes" : "NO"],
    ],
    note:
      "Wall-clock time of whole runs, the ratio taken pair by pair in the same process. " +
      "Decision record 0059 has the CPU profile behind it and what was changed.",
  };
}

async function main() {
  const pairs = Number(process.argv[2] ?? 40);
  const { manager, bare } = await measure(pairs);
  const ratio = median(manager.map((m, i) => m / bare[i]!));
  console.log(`manager / bare per step, ${STEPS} steps, median of ${pairs} pairs: ${fmt(ratio)}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
