/**
 * Embedding the plan manager in your own LangGraph app.
 *
 * 1. As a subgraph node: your state includes `PlanManagerState`'s keys (spread its `spec`), so
 *    the manager reads `goal`/`context` and writes `status`, `outcome`, `facts`, … into your
 *    state. Its interrupts surface in your graph and `Command({ resume })` on your graph
 *    resumes them. Compile the manager without a checkpointer: it uses the parent's. To add a
 *    scope change while it is paused, use `requestScopeChange(parent, config, request)`: it
 *    writes to the manager's own checkpoint (a write to your state's `scopeChanges` would start
 *    the manager afresh and lose its pending question).
 * 2. From a wrapper node with a different state: call the compiled manager and map its
 *    result into your keys.
 */
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import {
  createPlanManager,
  PlanManagerState,
  staticPlanner,
  type PlanDraft,
  type StaticPlannerOptions,
} from "langgraph-replan";
import type { StructuredToolInterface } from "@langchain/core/tools";

export const SupportState = Annotation.Root({
  ...PlanManagerState.spec,
  ticket: Annotation<string>,
  reply: Annotation<string>,
});

/** `replan` lets a scope change (`requestScopeChange`) be planned for; without it, one escalates. */
export function supportGraph(
  tools: StructuredToolInterface[],
  plan: PlanDraft,
  options: Pick<StaticPlannerOptions, "replan"> = {},
) {
  const manager = createPlanManager({ tools, planner: staticPlanner({ plan, ...options }) }).compile();
  return new StateGraph(SupportState)
    .addNode("intake", (s: typeof SupportState.State) => ({
      goal: `Resolve ticket: ${s.ticket}`,
      context: { ticket: s.ticket },
    }))
    .addNode("plan_manager", manager)
    .addNode("respond", (s: typeof SupportState.State) => ({
      reply:
        s.status === "completed" ? `Resolved: ${String(s.facts.resolution?.value ?? "")}` : `Escalated (${s.status})`,
    }))
    .addEdge(START, "intake")
    .addEdge("intake", "plan_manager")
    .addEdge("plan_manager", "respond")
    .addEdge("respond", END);
}

export const ResearchState = Annotation.Root({
  question: Annotation<string>,
  answer: Annotation<string | undefined>,
  caveats: Annotation<string[]>({ reducer: (_, b) => b, default: () => [] }),
});

export function researchGraph(tools: StructuredToolInterface[], plan: PlanDraft) {
  const manager = createPlanManager({ tools, planner: staticPlanner({ plan }) }).compile();
  return new StateGraph(ResearchState)
    .addNode("research", async (s: typeof ResearchState.State, config) => {
      const result = await manager.invoke({ goal: s.question, context: { question: s.question } }, config);
      return { answer: String(result.facts.answer?.value ?? ""), caveats: result.outcome?.uncertainty ?? [] };
    })
    .addEdge(START, "research")
    .addEdge("research", END);
}
