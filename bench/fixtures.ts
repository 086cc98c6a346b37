/** Shared fixtures: no-op tools, a chain plan, and the bare LangGraph baseline with the same tools. */
import { tool } from "@langchain/core/tools";
import { Annotation, END, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import { z } from "zod";
import { createPlanManager, staticPlanner, type PlanDraft } from "../src/index.js";

export const noop = tool(async () => ({ ok: true }), {
  name: "noop",
  description: "does nothing",
  schema: z.object({}).passthrough(),
});

export function chainPlan(n: number): PlanDraft {
  return {
    steps: Array.from({ length: n }, (_, i) => ({
      id: `s${i}`,
      goal: `Step ${i}`,
      tool: "noop",
      ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}),
    })),
  };
}

export function managerGraph(n: number, checkpointer: BaseCheckpointSaver) {
  return createPlanManager({ tools: [noop], planner: staticPlanner({ plan: chainPlan(n) }) }).compile({ checkpointer });
}

const BareState = Annotation.Root({ done: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }) });

/** N nodes in a chain, each calling the same no-op tool: the cheapest honest LangGraph equivalent. */
export function bareGraph(n: number, checkpointer: BaseCheckpointSaver) {
  const builder = new StateGraph(BareState) as unknown as StateGraph<
    typeof BareState.spec,
    typeof BareState.State,
    typeof BareState.Update,
    string
  >;
  for (let i = 0; i < n; i++) {
    builder.addNode(`n${i}`, async () => {
      await noop.invoke({});
      return { done: 1 };
    });
  }
  builder.addEdge(START, "n0");
  for (let i = 1; i < n; i++) builder.addEdge(`n${i - 1}`, `n${i}`);
  builder.addEdge(`n${n - 1}`, END);
  return builder.compile({ checkpointer }).withConfig({ recursionLimit: 100_000 });
}
