/**
 * The events a run sends as it goes — the graph's custom stream events, which the agent middleware
 * sends too — and who may observe them besides the stream (docs/decisions/0052-opentelemetry.md).
 * Here, below the runtime and the planners, so that telemetry can read them from either.
 */
import type { ReplanRecord } from "../plan/schema/decision.js";
import type { StepStatus } from "../plan/schema/run.js";
import type { Decision } from "../policy/ladder/decision.js";

/**
 * A custom stream event (`streamMode: "custom"`): the plan, a step started or finished, a decision, a replan,
 * the end of the run.
 */
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
