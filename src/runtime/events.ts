/** Custom stream events (stream mode "custom"): progress goes through LangGraph's writer, never the console. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Decision, ReplanRecord, StepStatus } from "../plan/schema.js";

export type PlanEvent =
  | { type: "plan"; version: number; steps: { id: string; goal: string }[] }
  /** `running`: steps running once this one has started, itself included (DESIGN §7.1). */
  | { type: "step_started"; stepId: string; goal: string; attempt: number; tool?: string; running: number }
  | { type: "step_finished"; stepId: string; goal: string; status: StepStatus; attempt: number; note?: string }
  | { type: "decision"; decision: Decision }
  | { type: "replan"; record: ReplanRecord }
  | { type: "finished"; status: string; summary: string };

export function emit(config: LangGraphRunnableConfig | undefined, event: PlanEvent): void {
  config?.writer?.(event);
}
