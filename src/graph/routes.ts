/**
 * The conditional edges of the response ladder. Each is a pure function of state, because
 * `updateState` re-runs the last node's branch (docs/architecture.md "State and channels").
 * Each names the channels it reads (`reads`), and is given only those: the read behind a
 * conditional edge costs what it reads (docs/decisions/0059-short-path.md). Its parameter's type
 * is the same list, so a route that reads one more channel does not compile until it names it.
 */
import { firstUnfinished } from "../plan/ready.js";
import { overlay } from "../plan/overlay.js";
import type { StepRun } from "../plan/schema/run.js";
import type { Plan } from "../plan/schema/plan.js";
import { planWrites, type PlanWrite } from "../runtime/plan-channel.js";
import { stopRequested } from "../policy/ladder/stop.js";
import type { PlanManagerStateType } from "../runtime/state.js";
import type { SeenWrite } from "./langgraph-seam.js";

type StateKey = keyof PlanManagerStateType;
/** The part of the state a route reads. */
type Reads<K extends readonly StateKey[]> = Pick<PlanManagerStateType, K[number]>;

const AFTER_PLANNER = ["status", "plan", "stop"] as const;
const AFTER_EXECUTOR = ["stop", "deviation", "status", "compensations", "plan", "steps"] as const;
const AFTER_EXTENDER = ["status"] as const;
const AFTER_CLASSIFIER = ["decisions", "status", "compensations"] as const;
const AFTER_REPLANNER = ["status"] as const;

export function routeAfterPlanner(state: Reads<typeof AFTER_PLANNER>): "executor" | "human" | "finalize" {
  if (state.status === "failed" || !state.plan || stopRequested(state)) return "finalize";
  return state.status === "awaiting_review" ? "human" : "executor";
}

routeAfterPlanner.reads = AFTER_PLANNER;

export function routeAfterExecutor(
  state: Reads<typeof AFTER_EXECUTOR>,
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

routeAfterExecutor.reads = AFTER_EXECUTOR;

/** A pending compensation, in a run that goes on or one that is ending (docs/decisions/0039-compensation.md). */
function compensationWaits(state: Pick<PlanManagerStateType, "status" | "compensations">): boolean {
  const live = state.status === "running" || state.status === "aborted" || state.status === "failed";
  return live && (state.compensations ?? []).some((c) => c.status === "pending");
}

export function routeAfterExtender(state: Reads<typeof AFTER_EXTENDER>): "executor" | "human" {
  return state.status === "awaiting_human" || state.status === "awaiting_review" ? "human" : "executor";
}
routeAfterExtender.reads = AFTER_EXTENDER;

/** Where the classifier's last decision leads. */
export function routeAfterClassifier(
  state: Reads<typeof AFTER_CLASSIFIER>,
): "executor" | "replanner" | "human" | "finalize" {
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

routeAfterClassifier.reads = AFTER_CLASSIFIER;

export function routeAfterReplanner(state: Reads<typeof AFTER_REPLANNER>): "executor" | "human" {
  return state.status === "awaiting_human" || state.status === "awaiting_review" ? "human" : "executor";
}
routeAfterReplanner.reads = AFTER_REPLANNER;

const replaced: SeenWrite = (_, write) => write;

/**
 * How a node's write shows in the channels the routes read (runtime/state.ts has their reducers), so
 * that a route sees it without LangGraph copying the channel to apply the write to the copy
 * (graph/langgraph-seam.ts `narrowRouteReads`). The executor writes step records at every step: the
 * route reads them through a view of the records before with the written ones on top. The plan the
 * planner writes is the channel's own reducer applied once more (a whole plan, or an append).
 */
export const SEEN_WRITES: Readonly<Partial<Record<StateKey, SeenWrite>>> = {
  status: replaced,
  stop: replaced,
  deviation: replaced,
  compensations: replaced,
  steps: (before, write) => overlay((before ?? {}) as Record<string, StepRun>, write as Record<string, StepRun>),
  plan: (before, write) => planWrites(before as Plan | undefined, [write as PlanWrite]),
};
