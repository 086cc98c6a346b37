/**
 * The short path: a 50-step chain on MemorySaver, the manager against bare LangGraph calling the
 * same no-op tool, in alternating runs; prints the median of the pairwise per-step ratios. Run under
 * `node --cpu-prof` to see where the manager's time goes:
 *   nice node --import tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/short-path.ts [pairs]
 */
import { MemorySaver } from "@langchain/langgraph";
import { bareGraph, managerGraph } from "./fixtures.js";
import { fmt, median } from "./lib.js";

const STEPS = 50;
let thread = 0;

async function timed(graph: { invoke: (input: never, config: object) => Promise<unknown> }, input: unknown) {
  const started = performance.now();
  await graph.invoke(input as never, { configurable: { thread_id: `t${(thread += 1)}` } });
  return performance.now() - started;
}

async function main() {
  const pairs = Number(process.argv[2] ?? 40);
  const manager = managerGraph(STEPS, new MemorySaver());
  const bare = bareGraph(STEPS, new MemorySaver());
  for (let i = 0; i < 5; i++) await Promise.all([timed(manager, { goal: "chain" }), timed(bare, {})]);
  const ratios: number[] = [];
  for (let i = 0; i < pairs; i++) {
    const m = await timed(manager, { goal: "chain" });
    const b = await timed(bare, {});
    ratios.push(m / b);
  }
  console.log(`manager / bare per step, ${STEPS} steps, median of ${pairs} pairs: ${fmt(median(ratios))}`);
}
void main();
