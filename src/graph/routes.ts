/**
 * The conditional edges of the response ladder. Each is a pure function of state, because
 * `updateState` re-runs the last node's branch (docs/architecture.md "State and channels").
 */
import { firstUnfinished } from "../plan/ready.js";
import { stopRequested } from "../policy/ladder/stop.js";
import type { PlanManagerStateType } from "../runtime/state.js";

export function routeAfterPlanner(state: PlanManagerStateType): "executor" | "human" | "finalize" {
  if (state.status === "failed" || !state.plan || stopRequested(state)) return "finalize";
  return state.status === "awaiting_review" ? "human" : "executor";
}

export function routeAfterExecutor(
  state: PlanManagerStateType,
): "executor" | "classifier" | "human" | "extender" | "finalize" {
  // An operator's stop comes first: a pending deviation or question stays in state for the resume.
  if (stopRequested(state)) return "finalize";
  if (state.deviation) return "classifier";
  if (state.status === "awaiting_human") return "human";
  // A compensation a replan or the run's end left waits for the executor, which runs it before anything else.
  if (compensationWaits(state)) return "executor";
  if (state.status === "failed" || state.status === "aborted") return "finalize";
  const plan = state.plan;
  if (!plan) return "finalize";
  // Every planned step finished: the end, or — for a rolling horizon — time to plan the next steps.
  if (firstUnfinished(plan, state.steps) === plan.steps.length)
    return plan.complete === false ? "extender" : "finalize";
  return "executor";
}

/** A pending compensation, in a run that goes on or one that is ending (docs/decisions/0039-compensation.md). */
function compensationWaits(state: PlanManagerStateType): boolean {
  const live = state.status === "running" || state.status === "aborted" || state.status === "failed";
  return live && (state.compensations ?? []).some((c) => c.status === "pending");
}

export function routeAfterExtender(state: PlanManagerStateType): "executor" | "human" {
  return state.status === "awaiting_human" || state.status === "awaiting_review" ? "human" : "executor";
}

/** Where the classifier's last decision leads. */
export function routeAfterClassifier(state: PlanManagerStateType): "executor" | "replanner" | "human" | "finalize" {
  switch (state.decisions[state.decisions.length - 1]?.action) {
    case "replan_local":
    case "replan_global":
      return "replanner";
    case "escalate":
      return "human";
    case "abort":
      return compensationWaits(state) ? "executor" : "finalize";
    default:
      return "executor";
  }
}

export function routeAfterReplanner(state: PlanManagerStateType): "executor" | "human" {
  return state.status === "awaiting_human" || state.status === "awaiting_review" ? "human" : "executor";
}
