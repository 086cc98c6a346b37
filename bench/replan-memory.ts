/**
 * Replan memory (docs/decisions/0014-replan-memory.md): 200 threads hit the same broken assumption (the primary source
 * is down; the mirror works). Threads run 8 at a time, each starting as a slot frees; the planner's
 * replan takes 200 ms, as a fast LLM call would. Memory off vs reuse vs hint (and reuse seeded by a
 * template): planner replan calls, tool attempts, threads recovered, wall time.
 */
import { tool } from "@langchain/core/tools";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { z } from "zod";
import {
  AssumptionBrokenError,
  createPlanManager,
  staticPlanner,
  type PlanDraft,
  type PlanManagerOptions,
} from "../src/index.js";
import { fmt, type Table } from "./lib.js";

/** A fast LLM replan; real ones take seconds. */
const PLANNER_MS = 200;
const POOL = 8;

const plan: PlanDraft = {
  assumptions: [{ id: "primary_up", statement: "the primary source answers" }],
  steps: [
    {
      id: "fetch",
      goal: "Fetch",
      tool: "fetch_primary",
      inputs: ["applicant_id"],
      produces: ["data"],
      assumptions: ["primary_up"],
    },
    { id: "score", goal: "Score", tool: "score", inputs: ["data"], produces: ["score"], dependsOn: ["fetch"] },
    { id: "report", goal: "Report", tool: "report", inputs: ["score"], produces: ["report"], dependsOn: ["score"] },
  ],
};
const mirrorSteps = [
  { id: "mirror", goal: "Fetch from the mirror", tool: "fetch_mirror", inputs: ["applicant_id"], produces: ["data"] },
  { id: "score", goal: "Score", tool: "score", inputs: ["data"], produces: ["score"], dependsOn: ["mirror"] },
  { id: "report", goal: "Report", tool: "report", inputs: ["score"], produces: ["report"], dependsOn: ["score"] },
];

async function scenario(threads: number, memory: Partial<PlanManagerOptions>) {
  let attempts = 0;
  let replans = 0;
  const schema = z.object({}).passthrough();
  const counted =
    <T>(fn: (a: Record<string, unknown>) => T) =>
    async (a: Record<string, unknown>) => {
      attempts += 1;
      return fn(a);
    };
  const tools = [
    tool(
      counted(() => {
        throw new AssumptionBrokenError("primary_up", "primary source is down");
      }),
      { name: "fetch_primary", description: "primary", schema },
    ),
    tool(
      counted((a) => ({ data: `mirror:${a.applicant_id}` })),
      { name: "fetch_mirror", description: "mirror", schema },
    ),
    tool(
      counted((a) => ({ score: String(a.data).length })),
      { name: "score", description: "score", schema },
    ),
    tool(
      counted((a) => ({ report: `score ${a.score}` })),
      { name: "report", description: "report", schema },
    ),
  ];
  const planner = staticPlanner({
    plan,
    replan: async () => {
      replans += 1;
      await new Promise((r) => setTimeout(r, PLANNER_MS));
      return { steps: mirrorSteps };
    },
  });
  const graph = createPlanManager({ tools, planner, ...memory }).compile({
    checkpointer: new MemorySaver(),
    store: new InMemoryStore(),
  });
  let next = 0;
  let recovered = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < threads) {
      const i = next++;
      const out = await graph.invoke(
        { goal: "review", context: { applicant_id: `X-${i}` } },
        {
          configurable: { thread_id: `t${i}` },
        },
      );
      if (out.status === "completed") recovered += 1;
    }
  };
  await Promise.all(Array.from({ length: POOL }, worker));
  return { replans, attempts, recovered, seconds: (performance.now() - started) / 1000 };
}

export async function replanMemory(quick: boolean): Promise<Table> {
  const threads = quick ? 50 : 200;
  const modes: [string, Partial<PlanManagerOptions>][] = [
    ["off", { replanMemory: { mode: "off" } }],
    ["reuse", { replanMemory: { mode: "reuse" } }],
    ["hint", { replanMemory: { mode: "hint" } }],
    [
      "reuse + template",
      { replanMemory: { mode: "reuse" }, replanTemplates: [{ assumption: "primary_up", steps: mirrorSteps }] },
    ],
  ];
  const rows: (string | number)[][] = [];
  await scenario(POOL, {}); // warm-up: the first graph built in a process pays for module loading
  for (const [name, options] of modes) {
    const r = await scenario(threads, options);
    const share = `${fmt((100 * r.replans) / threads, 1)}%`;
    rows.push([name, threads, `${r.replans} (${share})`, r.attempts, `${r.recovered}/${threads}`, fmt(r.seconds, 2)]);
  }
  return {
    title: `Replan memory: ${threads} threads with the same broken assumption (${POOL} at a time, planner ${PLANNER_MS} ms)`,
    note:
      `Planner replan calls under reuse are the threads already replanning before the first fix was saved ` +
      `(at most the ${POOL} running at once); a template needs none.`,
    head: ["memory", "threads", "planner replan calls", "tool attempts", "recovered", "wall time (s)"],
    rows,
  };
}
