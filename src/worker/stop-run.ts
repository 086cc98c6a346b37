/**
 * `requestStop` and `resumeStopped`: an operator's stop written to a thread that no run holds (a
 * paused thread, or one whose worker died), and the way back. A thread a worker is running is
 * stopped by that worker at its next step boundary (worker/driver.ts): a write from another
 * process would fork the checkpoint the run is still writing, and the run would never see it.
 */
import type { LangGraphRunnableConfig, StateSnapshot } from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";
import { managerWrite } from "../graph/boundary.js";
import type { RunStatus } from "../plan/schema/outcome.js";

/** What the helpers need of a compiled plan manager. */
export interface StoppableGraph {
  getState(config: LangGraphRunnableConfig): Promise<StateSnapshot>;
  updateState(
    config: LangGraphRunnableConfig,
    values: Record<string, unknown>,
    asNode?: string,
  ): Promise<LangGraphRunnableConfig>;
  invoke(input: null, config: LangGraphRunnableConfig): Promise<unknown>;
}

interface Values {
  status?: RunStatus;
  plan?: unknown;
  stop?: { previousStatus?: RunStatus } | null;
}

/** Nodes whose pending run would lose its decision if the thread were routed from the executor. */
const MID_DECISION = new Set(["classifier", "replanner"]);

const threadOf = (config: LangGraphRunnableConfig) => String(config.configurable?.thread_id ?? "");

/** Why a thread cannot be stopped now, or undefined when it can. */
export function stopProblem(snapshot: StateSnapshot, thread: string): string | undefined {
  const values = (snapshot.values ?? {}) as Values;
  const status = values.status;
  if (status === undefined) return `thread "${thread}" has not started: there is nothing to stop`;
  if (status === "stopped") return `thread "${thread}" is already stopped (resume it to carry on)`;
  if (["completed", "partial", "failed", "aborted"].includes(status))
    return `thread "${thread}" has finished (status: ${status}): there is nothing to stop`;
  if (!values.plan) return `thread "${thread}" is still planning: stop it once its plan is made`;
  if (snapshot.tasks.some((t) => MID_DECISION.has(t.name)))
    return `thread "${thread}" is between a deviation and its answer: stop it at the next step boundary`;
  return undefined;
}

/**
 * Stops a thread that no run holds: the run ends with status `stopped`, keeping its pending
 * deviation or question for `resumeStopped`. Throws `invalid_update` naming why otherwise.
 */
export async function requestStop(
  graph: StoppableGraph,
  config: LangGraphRunnableConfig,
  options: { reason?: string; now?: () => number } = {},
): Promise<void> {
  const snapshot = await graph.getState(config);
  const problem = stopProblem(snapshot, threadOf(config));
  if (problem) throw new PlanManagerError("invalid_update", problem, { path: "stop" });
  const requestedAt = new Date((options.now ?? Date.now)()).toISOString();
  const stop = { requestedAt, ...(options.reason ? { reason: options.reason } : {}) };
  // Written as the executor: its route sends a stop request to finalize, from any step boundary.
  const updated = await graph.updateState(config, managerWrite({ stop }), "executor");
  await graph.invoke(null, updated);
}

/**
 * Reopens a stopped thread without running it: the status it had comes back, and the next run
 * (`invoke(null, config)`) carries on from the same step, deviation or question.
 */
export async function reopenStopped(
  graph: StoppableGraph,
  config: LangGraphRunnableConfig,
): Promise<LangGraphRunnableConfig> {
  const values = ((await graph.getState(config)).values ?? {}) as Values;
  if (values.status !== "stopped") {
    const status = values.status ?? "not started";
    throw new PlanManagerError("invalid_resume", `thread "${threadOf(config)}" is not stopped (status: ${status})`);
  }
  const previous = values.stop?.previousStatus ?? "running";
  // A plan waiting for review routes from the planner; everything else from the executor.
  const asNode = previous === "awaiting_review" ? "planner" : "executor";
  // The stopped outcome goes too: a run has none until it ends (a stop is taken only between steps).
  return graph.updateState(config, managerWrite({ stop: null, status: previous, outcome: undefined }), asNode);
}

/** Resumes a stopped thread in this process until it finishes or pauses again. */
export async function resumeStopped(graph: StoppableGraph, config: LangGraphRunnableConfig): Promise<unknown> {
  return graph.invoke(null, await reopenStopped(graph, config));
}
