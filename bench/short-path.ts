/**
 * The short path: a 50-step chain on MemorySaver, the manager against bare LangGraph calling the
 * same no-op tool, in alternating runs; the median of the pairwise per-step ratios. A suite of
 * `npm run bench -- --only=short` (wall-clock ratio). Run on its own (`[pairs]`, default 40) it prints
 * the wall-clock ratio and the CPU-time ratio (`process.cpuUsage` over each run, the one to trust on a
 * loaded machine), and under `node --cpu-prof` shows where the manager's time goes
 * (docs/decisions/0059-short-path.md):
 *   nice node --import tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/short-path.ts [pairs]
 */
import { pathToFileURL } from "node:url";
import { MemorySaver } from "@langchain/langgraph";
import { bareGraph, managerGraph } from "./fixtures.js";
import { fmt, median, type Table } from "./lib.js";

const STEPS = 50;
let thread = 0;

/** What one run took: wall-clock ms, and this process's CPU ms over it (user + system). */
interface Took {
  wall: number;
  cpu: number;
}

async function timed(graph: { invoke: (input: never, config: object) => Promise<unknown> }, input: unknown) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await graph.invoke(input as never, { configurable: { thread_id: `t${(thread += 1)}` } });
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000 };
}

/** Per-pair times of `pairs` alternating runs (manager first), after five warm-up pairs; `one`: the same plans of one step. */
async function measure(
  pairs: number,
): Promise<{ manager: Took[]; bare: Took[]; one: { manager: Took[]; bare: Took[] } }> {
  const manager = managerGraph(STEPS, new MemorySaver());
  const bare = bareGraph(STEPS, new MemorySaver());
  const manager1 = managerGraph(1, new MemorySaver());
  const bare1 = bareGraph(1, new MemorySaver());
  for (let i = 0; i < 5; i++) await Promise.all([timed(manager, { goal: "chain" }), timed(bare, {})]);
  for (let i = 0; i < 5; i++) await Promise.all([timed(manager1, { goal: "chain" }), timed(bare1, {})]);
  const out = { manager: [] as Took[], bare: [] as Took[], one: { manager: [] as Took[], bare: [] as Took[] } };
  for (let i = 0; i < pairs; i++) {
    out.manager.push(await timed(manager, { goal: "chain" }));
    out.bare.push(await timed(bare, {}));
    out.one.manager.push(await timed(manager1, { goal: "chain" }));
    out.one.bare.push(await timed(bare1, {}));
  }
  return out;
}

/**
 * The cost of one more step, without what a run pays once (the manager's planner and finalize nodes,
 * which stay: decision 0024): per round, (50-step run − 1-step run) / 49 for each side, then the ratio;
 * the median over the rounds.
 */
function marginalRatio(runs: Awaited<ReturnType<typeof measure>>, of: keyof Took): number {
  const per = (long: Took, short: Took) => (long[of] - short[of]) / (STEPS - 1);
  return median(runs.manager.map((m, i) => per(m, runs.one.manager[i]!) / per(runs.bare[i]!, runs.one.bare[i]!)));
}

/** The median of the pairwise manager / bare ratios of one measure. */
function ratioOf(runs: { manager: Took[]; bare: Took[] }, of: keyof Took): number {
  return median(runs.manager.map((m, i) => m[of] / runs.bare[i]![of]));
}

export async function shortPath(quick: boolean): Promise<Table> {
  const pairs = quick ? 15 : 40;
  const runs = await measure(pairs);
  const wall = ratioOf(runs, "wall");
  const cpu = ratioOf(runs, "cpu");
  const perStep = (took: Took[]) => fmt(median(took.map((t) => t.wall)) / STEPS, 3);
  const within = (ratio: number) => (ratio <= 1.5 ? "yes" : "NO");
  return {
    title: `The short path: ${STEPS} steps on MemorySaver, manager against bare LangGraph (median of ${pairs} alternating pairs)`,
    head: [
      "steps",
      "manager ms/step",
      "bare ms/step",
      "wall ratio",
      "CPU ratio",
      "≤ 1.5 (wall / CPU)",
      "CPU ratio of one more step",
    ],
    rows: [
      [
        STEPS,
        perStep(runs.manager),
        perStep(runs.bare),
        fmt(wall),
        fmt(cpu),
        `${within(wall)} / ${within(cpu)}`,
        fmt(marginalRatio(runs, "cpu")),
      ],
    ],
    note:
      "Whole runs, the ratio taken pair by pair in the same process: wall-clock time, and this process's CPU time " +
      "over each run (`process.cpuUsage`), which a loaded machine skews less. The last column is the cost of one " +
      "more step without what a run pays once (the planner and finalize nodes): per round, the 50-step run less a " +
      "1-step run of the same graph, over 49, manager against bare. " +
      "Decision record 0059 has the CPU profile behind it and what was changed.",
  };
}

async function main() {
  const pairs = Number(process.argv[2] ?? 40);
  const runs = await measure(pairs);
  const cpu = (took: Took[]) => fmt(median(took.map((t) => t.cpu)), 1);
  console.log(
    `manager / bare per step, ${STEPS} steps, median of ${pairs} pairs: wall ${fmt(ratioOf(runs, "wall"))}, ` +
      `CPU ${fmt(ratioOf(runs, "cpu"))} (CPU ms per run: manager ${cpu(runs.manager)}, bare ${cpu(runs.bare)}); ` +
      `one more step, CPU: ${fmt(marginalRatio(runs, "cpu"))} (1-step runs: manager ${cpu(runs.one.manager)}, bare ${cpu(runs.one.bare)})`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
