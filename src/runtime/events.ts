/** Custom stream events (stream mode "custom"): progress goes through LangGraph's writer, never the console. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ReplanRecord } from "../plan/schema/decision.js";
import type { StepStatus } from "../plan/schema/run.js";
import type { Decision } from "../policy/ladder/decision.js";

export type PlanEvent =
  | { type: "plan"; version: number; steps: { id: string; goal: string }[] }
  /** `running`: steps running once this one has started, itself included (docs/architecture.md "Parallel steps"). */
  | { type: "step_started"; stepId: string; goal: string; attempt: number; tool?: string; running: number }
  /** Sent once the checkpoint that holds the attempt is written (docs/decisions/0028-a-stopped-run-keeps-its-results.md). */
  | { type: "step_finished"; stepId: string; goal: string; status: StepStatus; attempt: number; note?: string }
  | { type: "step_stalled"; stepId: string; goal: string; attempt: number; estimateMs: number; runningMs: number }
  | { type: "decision"; decision: Decision }
  | { type: "replan"; record: ReplanRecord }
  | { type: "finished"; status: string; summary: string }
  /**
   * Replan memory bookkeeping: a branch saved, scored, not saved (why), or a store write that failed
   * (a settled branch's, or a replan's failure count for an entry it discarded; `key` names the entry).
   */
  | { type: "memory"; op: "saved" | "scored" | "not_saved" | "error"; key: string; reason?: string };

export function emit(config: LangGraphRunnableConfig | undefined, event: PlanEvent): void {
  config?.writer?.(event);
}

/** Where a run keeps the events waiting for their checkpoint (the `__` prefix keeps it out of checkpoint metadata). */
const HELD_KEY = "__langgraph_replan_held_events";

/** The config a run's nodes see: it carries the run's events that wait for a checkpoint. */
export function withHeldEvents<C extends { configurable?: Record<string, unknown> }>(config: C | undefined): C {
  return { ...(config as C), configurable: { ...config?.configurable, [HELD_KEY]: [] as PlanEvent[] } };
}

/**
 * Sends `event` once what it reports is in a checkpoint: the writes of the node sending it are
 * checkpointed after the node returns, so the next node of the run sends it (`sendHeld`). A run
 * without a holding place (a node called on its own) sends it at once.
 */
export function emitOnceDurable(config: LangGraphRunnableConfig | undefined, event: PlanEvent): void {
  const held = config?.configurable?.[HELD_KEY];
  if (Array.isArray(held)) held.push(event);
  else emit(config, event);
}

/**
 * Sends the events held by the nodes before this one. Called as a node starts: with the run's
 * durability ("sync" unless the caller chose), LangGraph writes a superstep's checkpoint before it
 * starts the next superstep's nodes.
 */
export function sendHeld(config: LangGraphRunnableConfig): void {
  const held = config.configurable?.[HELD_KEY] as PlanEvent[] | undefined;
  if (held === undefined || held.length === 0) return;
  for (const event of held.splice(0)) emit(config, event);
}
