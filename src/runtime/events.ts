/** Custom stream events (stream mode "custom"): progress goes through LangGraph's writer, never the console. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ReplanRecord, StepStatus } from "../plan/schema.js";
import type { Decision } from "../policy/decision.js";

export type PlanEvent =
  | { type: "plan"; version: number; steps: { id: string; goal: string }[] }
  /** `running`: steps running once this one has started, itself included (docs/architecture.md "Parallel steps"). */
  | { type: "step_started"; stepId: string; goal: string; attempt: number; tool?: string; running: number }
  | { type: "step_finished"; stepId: string; goal: string; status: StepStatus; attempt: number; note?: string }
  | { type: "step_stalled"; stepId: string; goal: string; attempt: number; estimateMs: number; runningMs: number }
  | { type: "decision"; decision: Decision }
  | { type: "replan"; record: ReplanRecord }
  | { type: "finished"; status: string; summary: string }
  /** Replan memory bookkeeping outside a replan: a branch saved, scored, not saved (why), or a store error. */
  | { type: "memory"; op: "saved" | "scored" | "not_saved" | "error"; key: string; reason?: string };

export function emit(config: LangGraphRunnableConfig | undefined, event: PlanEvent): void {
  config?.writer?.(event);
}
