/**
 * The capability guard in the replan's phase sequence (docs/architecture.md "Untrusted facts"): what the run did before
 * (every earlier plan version, rebuilt from the history) against what the proposal would do,
 * and, when the guard fires, the plan review a person answers. Whatever made the draft —
 * planner, memory, a person's constraint — it goes through here before it becomes a version.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../../runtime/options.js";
import type { PendingHuman, PlanManagerStateType, PlanManagerUpdate } from "../../runtime/state.js";
import { originalSteps } from "../../plan/history.js";
import type { ReplanRecord } from "../../plan/schema/decision.js";
import type { Plan } from "../../plan/schema/plan.js";
import type { Step } from "../../plan/schema/step.js";
import type { Decision } from "../../policy/ladder/decision.js";
import type { CapabilityHit } from "../../policy/capability/guard.js";
import {
  reviewNewSteps as reviewSteps,
  runBaseline as reviewBaseline,
  type DraftOrigin,
} from "../../policy/capability/review.js";
import type { CapabilityBaseline } from "../../policy/capability/types.js";
import { planDiff } from "../../plan/diff.js";
import { executorEffects } from "./executor-effects.js";
import { emit } from "../../runtime/events.js";
import { offered, PLAN_REVIEW_OPTIONS } from "../../runtime/interrupts.js";
import type { ProposedVersion } from "../../policy/replan/replan.js";

/** Options at a held replan: `reject` discards it; `replan` discards it and asks again with a constraint. */
export const HELD_REVIEW_OPTIONS = ["approve", "reject", "replan", "change_scope", "abort"] as const;

/** What earlier plan versions of the run did; decided in policy/capability/review.ts. */
export function runBaseline(
  state: PlanManagerStateType,
  original: readonly Step[] = originalSteps(state),
): CapabilityBaseline {
  return reviewBaseline(state, original);
}

export type { DraftOrigin };
export { executorEffects };

/** Whether new steps may become a version without a person, per `policy.replanTools` (policy/capability/review.ts). */
export function reviewNewSteps(
  rt: Runtime,
  state: PlanManagerStateType,
  replacement: readonly Step[],
  proposed: readonly Step[],
  origin: DraftOrigin = {},
): CapabilityHit | undefined {
  const rules = { replanTools: rt.policy.replanTools, sideEffectsOf: (name: string) => executorEffects(rt, name) };
  return reviewSteps(rules, state, replacement, proposed, origin);
}

/**
 * Any proposed version (replan or extension) the capability guard stopped: its decision, and the plan
 * review a person answers. The evidence stands (facts relabelled); the plan does not change yet.
 */
export function holdProposal(
  rt: Runtime,
  state: PlanManagerStateType,
  config: LangGraphRunnableConfig,
  held: { decision: Decision; notes: readonly Decision[] },
  proposal: ProposedVersion,
  hit: CapabilityHit,
): PlanManagerUpdate {
  const { decision } = held;
  emit(config, { type: "decision", decision });
  const { plan: next } = proposal;
  const tools = [...new Set(hit.findings.map((f) => f.tool))].join(", ");
  const pendingHuman: PendingHuman = {
    kind: "plan_review",
    reason: `approve plan version ${next.version}? ${hit.reason}`,
    planVersion: next.version,
    options: offered([...HELD_REVIEW_OPTIONS], rt.canReplan),
    context: {
      goal: state.goal,
      rule: hit.rule,
      failureClass: decision.failureClass,
      tools,
      capabilities: hit.findings,
      diff: planDiff(state.plan!, next),
      steps: next.steps.map((s) => ({ id: s.id, goal: s.goal, tool: s.tool ?? null })),
    },
  };
  if (decision.stepId !== undefined) pendingHuman.stepId = decision.stepId;
  // After replan memory's decisions, if it answered this replan.
  return { decisions: [...held.notes, decision], status: "awaiting_review", pendingHuman, heldReplan: proposal };
}

/** The plan review of a committed version under `reviewReplans`. */
export function versionReview(rt: Runtime, goal: string, next: Plan, record: ReplanRecord, reason: string) {
  const steps = next.steps.map((s) => ({ id: s.id, goal: s.goal, tool: s.tool ?? null }));
  const pendingHuman: PendingHuman = {
    kind: "plan_review",
    reason,
    planVersion: next.version,
    options: offered([...PLAN_REVIEW_OPTIONS], rt.canReplan),
    context: { goal, replan: record, steps },
  };
  return pendingHuman;
}
