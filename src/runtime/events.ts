/** Custom stream events (stream mode "custom"): progress goes through LangGraph's writer, never the console. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { observerOf, type PlanEvent } from "../contracts/run-events.js";
import { runPart, withRunPart } from "./run-parts.js";

export type { EventObserver, PlanEvent } from "../contracts/run-events.js";
export { observerOf, withObserver } from "../contracts/run-events.js";

export function emit(config: LangGraphRunnableConfig | undefined, event: PlanEvent): void {
  observerOf(config)?.observe(event);
  config?.writer?.(event);
}

/** The config a run's nodes see: it carries the run's events that wait for a checkpoint. */
export function withHeldEvents<C extends { configurable?: Record<string, unknown> }>(config: C | undefined): C {
  return withRunPart(config, "held", [] as PlanEvent[]);
}

/**
 * Sends `event` once what it reports is in a checkpoint: the writes of the node sending it are
 * checkpointed after the node returns, so the next node of the run sends it (`sendHeld`). A run
 * without a holding place (a node called on its own) sends it at once. The observer is told at once:
 * an attempt's span ends when the attempt did, not when its checkpoint is written.
 */
export function emitOnceDurable(config: LangGraphRunnableConfig | undefined, event: PlanEvent): void {
  const held = runPart(config, "held");
  if (!Array.isArray(held)) return emit(config, event);
  observerOf(config)?.observe(event);
  held.push(event);
}

/**
 * Sends the events held by the nodes before this one. Called as a node starts: with the run's
 * durability ("sync" unless the caller chose), LangGraph writes a superstep's checkpoint before it
 * starts the next superstep's nodes.
 */
export function sendHeld(config: LangGraphRunnableConfig): void {
  const held = runPart(config, "held") as PlanEvent[] | undefined;
  if (held === undefined || held.length === 0) return;
  for (const event of held.splice(0)) config.writer?.(event);
}
