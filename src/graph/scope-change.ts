/**
 * `requestScopeChange`: adds a scope change to a paused plan manager, planned for at the next step
 * boundary (a global replan that keeps completed, trusted work). The pending question stays
 * pending: answer it as before (`Command({ resume })` or `resumeRun` on the same graph).
 *
 * Standalone, this is `graph.updateState(config, { scopeChanges: [request] })`. Embedded as a
 * subgraph node it is not: a write to the parent's `scopeChanges` makes the parent schedule the
 * manager's node afresh, under a new checkpoint namespace, so the paused manager and its question
 * are dropped and `invoke` restarts the plan. The write must go to the manager's own checkpoint,
 * found through `getState(config, { subgraphs: true })`; LangGraph's `updateState` routes a config
 * whose `checkpoint_ns` names a subgraph to that subgraph (`Pregel._subgraphForNamespace`).
 */
import type { LangGraphRunnableConfig, StateSnapshot } from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";

/** What the helper needs of a compiled graph: the plan manager itself, or a graph embedding it. */
export interface ScopeChangeTarget {
  getState(config: LangGraphRunnableConfig, options?: { subgraphs?: boolean }): Promise<StateSnapshot>;
  updateState(config: LangGraphRunnableConfig, values: Record<string, unknown>): Promise<LangGraphRunnableConfig>;
  invoke(input: null, config: LangGraphRunnableConfig): Promise<unknown>;
}

interface ManagerValues {
  status: string;
  scopeChanges: unknown;
}

const PAUSED = new Set(["awaiting_human", "awaiting_review"]);
const FINISHED = new Set(["completed", "partial", "failed", "aborted"]);

const isManagerValues = (values: unknown): values is ManagerValues =>
  values !== null && typeof values === "object" && "scopeChanges" in values && "status" in values;

const isSnapshot = (state: unknown): state is StateSnapshot =>
  state !== null && typeof state === "object" && "values" in state && "tasks" in state;

/**
 * The plan manager's snapshot in this thread, innermost first: a paused subgraph task's own state
 * before the parent's, because a parent that spreads the manager's output keys carries a stale
 * copy of `status` until the subgraph returns. Read it from `getState(config, { subgraphs: true })`.
 */
export function findManagerSnapshot(snapshot: StateSnapshot): StateSnapshot | undefined {
  for (const task of snapshot.tasks) {
    const inner = isSnapshot(task.state) ? findManagerSnapshot(task.state) : undefined;
    if (inner) return inner;
  }
  return isManagerValues(snapshot.values) ? snapshot : undefined;
}

/** The config of the manager's checkpoint that received the scope change. */
export async function requestScopeChange(
  graph: ScopeChangeTarget,
  config: LangGraphRunnableConfig,
  request: string,
): Promise<LangGraphRunnableConfig> {
  const thread = String(config.configurable?.thread_id ?? "");
  if (typeof request !== "string" || request.trim() === "") {
    throw new PlanManagerError("invalid_update", "requestScopeChange: the request must be a non-empty string", {
      path: "scopeChanges",
    });
  }
  const snapshot = await graph.getState(config, { subgraphs: true });
  const manager = findManagerSnapshot(snapshot);
  if (!manager) {
    throw new PlanManagerError(
      "invalid_update",
      `thread "${thread}" has no plan manager state: start a run first (a scope change is taken while a run is paused)`,
      { path: "scopeChanges" },
    );
  }
  const { status } = manager.values as ManagerValues;
  // A running thread would race its own run (two writers forking one checkpoint); a finished
  // one has no step boundary left to plan at.
  if (!PAUSED.has(status)) {
    const what = FINISHED.has(status)
      ? "this run has finished, so start a new run with the changed goal"
      : "wait for the run to pause (an interrupt), then request it";
    const rule = "a scope change is taken while the run waits for a person";
    const message = `thread "${thread}" is not paused (status: ${status}): ${rule}; ${what}`;
    throw new PlanManagerError("invalid_update", message, { path: "scopeChanges" });
  }
  // Standalone, the manager's `updateState` asks the pending question again on the new checkpoint;
  // embedded, the parent's checkpoint still holds the question.
  return graph.updateState(manager.config, { scopeChanges: [request] });
}
