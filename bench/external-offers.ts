/**
 * `npx tsx bench/external-offers.ts [n]`: n independent external steps (every other one
 * side-effecting), all ready at once, submitted by the calling agent one by one, the last listed
 * first (docs/decisions/0042-external-steps.md). Reports the time to the first question, the time
 * per submission, how many questions were asked and the most steps one question offered. Each
 * question lists every step offered, so a submission's checkpoints grow with the steps still offered.
 */
import { MemorySaver } from "@langchain/langgraph";
import { createPlanManager, pendingQuestion, resumeRun, staticPlanner, type PlanDraft } from "../src/index.js";

const n = Number(process.argv[2] ?? 50);
const plan: PlanDraft = {
  steps: Array.from({ length: n }, (_, i) => ({
    id: `s${i}`,
    goal: `step ${i}`,
    external: { instructions: `do part ${i}` },
    produces: [`k${i}`],
    ...(i % 2 === 0 ? { sideEffects: [`effect ${i}`], idempotent: false } : {}),
  })),
};
const graph = createPlanManager({ tools: [], planner: staticPlanner({ plan }) }).compile({
  checkpointer: new MemorySaver(),
});
const config = { configurable: { thread_id: "bench" } };

const started = performance.now();
await graph.invoke({ goal: "bench" }, config);
const firstQuestionMs = performance.now() - started;
let questions = 0;
let widest = 0;
const submitting = performance.now();
for (
  let q = await pendingQuestion(graph, config);
  q?.kind === "external_step";
  q = await pendingQuestion(graph, config)
) {
  const offered = q.context.offered?.map((o) => o.step.id) ?? [q.context.step.id];
  widest = Math.max(widest, offered.length);
  questions += 1;
  const stepId = offered.at(-1)!;
  await resumeRun(graph, config, { action: "submit", stepId, output: { [`k${stepId.slice(1)}`]: stepId } });
}
const submitMs = (performance.now() - submitting) / n;
const state = (await graph.getState(config)).values as { status: string; sideEffects: unknown[] };
console.log(
  JSON.stringify({
    n,
    status: state.status,
    firstQuestionMs: Math.round(firstQuestionMs),
    perSubmitMs: Math.round(submitMs),
    questions,
    mostOfferedAtOnce: widest,
    effects: state.sideEffects.length,
  }),
);
