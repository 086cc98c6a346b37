/**
 * `requestScopeChange`: asks a paused or running plan manager for a scope change, planned for at
 * the next step boundary (a global replan that keeps completed, trusted work). It works on a
 * standalone manager and on a manager embedded as a subgraph node: there it writes to the
 * subgraph's own checkpoint (a write to the parent's `scopeChanges` would not reach the paused
 * manager, and would drop its interrupt).
 */
import type { LangGraphRunnableConfig, StateSnapshot } from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";

interface UpdatableGraph {
  getState(config: LangGraphRunnableConfig, options?: { subgraphs?: boolean }): Promise<StateSnapshot>;
  updateState(config: LangGraphRunnableConfig, values: Record<string, unknown>): Promise<LangGraphRunnableConfig>;
}

const isManagerState = (values: unknown): values is { status: string; scopeChanges: unknown } =>
  values !== null && typeof values === "object" && "scopeChanges" in values && "status" in values;

/** The snapshot of the plan manager in this thread: the graph itself, or the paused subgraph that is one. */
function findManager(snapshot: StateSnapshot): StateSnapshot | undefined {
  for (const task of snapshot.tasks) {
    const inner = task.state as StateSnapshot | undefined;
    if (inner && "values" in inner) {
      const found = findManager(inner);
      if (found) return found;
    }
  }
  return isManagerState(snapshot.values) ? snapshot : undefined;
}

export async function requestScopeChange(graph: UpdatableGraph, config: LangGraphRunnableConfig, request: string): Promise<void> {
  const thread = String(config.configurable?.thread_id ?? "");
  if (typeof request !== "string" || request.trim() === "") {
    throw new PlanManagerError("invalid_update", "requestScopeChange: the request must be a non-empty string", { path: "request" });
  }
  const manager = findManager(await graph.getState(config, { subgraphs: true }));
  if (!manager) {
    throw new PlanManagerError("invalid_update", `thread "${thread}" has no plan manager state: start a run before changing its scope`);
  }
  const status = (manager.values as { status: string }).status;
  if (["completed", "partial", "failed", "aborted"].includes(status)) {
    throw new PlanManagerError("invalid_update", `thread "${thread}" has finished (status: ${status}); a scope change needs a new run`);
  }
  await graph.updateState(manager.config, { scopeChanges: [request] });
}
