/** Custom stream events (stream mode "custom"): progress goes through LangGraph's writer, never the console. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ReplanRecord } from "../plan/schema/decision.js";
import type { StepStatus } from "../plan/schema/run.js";
import type { Decision } from "../policy/ladder/decision.js";

export type PlanEvent =
  | { type: "plan"; version: number; steps: { id: string; goal: string }[] }
  /**
   * `running`: steps running once this one has started, itself included (docs/architecture.md "Parallel steps").
   * `key`: the idempotency key of a side-effecting call; `planVersion`: the version the attempt runs in
   * (both optional: telemetry reads them when sent, docs/decisions/0052-opentelemetry.md).
   */
  | {
      type: "step_started";
      stepId: string;
      goal: string;
      attempt: number;
      tool?: string;
      running: number;
      key?: string;
      planVersion?: number;
    }
  /** Sent once the checkpoint that holds the attempt is written (docs/decisions/0028-a-stopped-run-keeps-its-results.md). */
  | {
      type: "step_finished";
      stepId: string;
      goal: string;
      status: StepStatus;
      attempt: number;
      note?: string;
      key?: string;
    }
  | { type: "step_stalled"; stepId: string; goal: string; attempt: number; estimateMs: number; runningMs: number }
  | { type: "decision"; decision: Decision }
  | { type: "replan"; record: ReplanRecord }
  | { type: "finished"; status: string; summary: string }
  /**
   * Replan memory bookkeeping: a branch saved, scored, not saved (why), or a store write that failed
   * (a settled branch's, or a replan's failure count for an entry it discarded; `key` names the entry).
   */
  | { type: "memory"; op: "saved" | "scored" | "not_saved" | "error"; key: string; reason?: string };

/**
 * Who sees a run's events as they happen, besides the stream: the run's telemetry
 * (docs/decisions/0052-opentelemetry.md). Set once per run (`withObserver`); a run without one pays a
 * property read per event.
 */
export interface EventObserver {
  observe(event: PlanEvent): void;
}

const OBSERVER_KEY = "__langgraph_replan_observer";

/** The config a run's nodes see, with `observer` told of every event they send. */
export function withObserver<C extends { configurable?: Record<string, unknown> }>(
  config: C | undefined,
  observer: EventObserver,
): C {
  return { ...(config as C), configurable: { ...config?.configurable, [OBSERVER_KEY]: observer } };
}

/** The observer of the run `config` belongs to, if it has one. */
export function observerOf(config: { configurable?: Record<string, unknown> } | undefined): EventObserver | undefined {
  return config?.configurable?.[OBSERVER_KEY] as EventObserver | undefined;
}

export function emit(config: LangGraphRunnableConfig | undefined, event: PlanEvent): void {
  observerOf(config)?.observe(event);
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
 * without a holding place (a node called on its own) sends it at once. The observer is told at once:
 * an attempt's span ends when the attempt did, not when its checkpoint is written.
 */
export function emitOnceDurable(config: LangGraphRunnableConfig | undefined, event: PlanEvent): void {
  const held = config?.configurable?.[HELD_KEY];
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
  const held = config.configurable?.[HELD_KEY] as PlanEvent[] | undefined;
  if (held === undefined || held.length === 0) return;
  for (const event of held.splice(0)) config.writer?.(event);
}
