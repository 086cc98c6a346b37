/**
 * The capability guard in the replan's phase sequence (DESIGN §7.6): what the run did before
 * (every earlier plan version, rebuilt from the history) against what the proposal would do,
 * and, when the guard fires, the plan review a person answers. Whatever made the draft —
 * planner, memory, a person's constraint — it goes through here before it becomes a version.
 */
import type { PendingHuman, PlanManagerUpdate } from "./state.js";
import { planAtVersion } from "../plan/history.js";
import type { Decision, Step } from "../plan/schema.js";
import { capabilityBaseline, capabilityGuard, type CapabilityHit } from "../policy/capability.js";
import { planDiff } from "../plan/diff.js";
import { leaves } from "../policy/capability-taint.js";
import { mergeSteps } from "../policy/replan-merge.js";
import { emit } from "./events.js";
import { offered } from "./interrupts.js";
import type { Replan } from "./replan-context.js";
import type { ProposedVersion } from "./replan-version.js";

/** Options at a held replan: `reject` discards it; `replan` discards it and asks again with a constraint. */
export const HELD_REVIEW_OPTIONS = ["approve", "reject", "replan", "change_scope", "abort"] as const;

/** Whether the merged steps may become a version without a person, per `policy.replanTools`. */
export function capabilityReview(r: Replan, replacement: readonly Step[]): CapabilityHit | undefined {
  const { state, rt } = r;
  const versions: Step[][] = [];
  for (let v = 1; v <= r.plan.version; v++) versions.push(planAtVersion(state, v)?.steps ?? []);
  const inputs = Object.values(state.facts).filter((f) => f.producedBy === "input" || f.producedBy === "human");
  const trustedText = [state.goal, ...inputs.flatMap((f) => leaves(f.value))];
  return capabilityGuard({
    replacement,
    previous: r.plan.steps,
    proposed: mergeSteps(r.plan.steps, r.affectedIds, replacement),
    baseline: capabilityBaseline(versions, trustedText),
    facts: state.facts,
    replanTools: rt.policy.replanTools,
    sideEffectsOf: (tool) => rt.metadataOf(tool)?.sideEffects ?? [],
  });
}

/** The proposal waits in a plan review; the evidence stands (facts relabelled), the plan does not change yet. */
export function holdForReview(r: Replan, proposal: ProposedVersion, hit: CapabilityHit): PlanManagerUpdate {
  const decision: Decision = {
    seq: r.state.decisions.length + 1,
    ...(r.trigger.stepId !== undefined ? { stepId: r.trigger.stepId } : {}),
    attempt: r.trigger.attempt,
    failureClass: r.trigger.failureClass,
    action: "escalate",
    rule: hit.rule,
    reason: hit.reason,
    planVersion: r.plan.version,
    at: r.at(),
    ...(r.assumption !== undefined ? { brokenAssumption: r.assumption } : {}),
  };
  emit(r.config, { type: "decision", decision });
  const { plan: next } = proposal;
  const tools = [...new Set(hit.findings.map((f) => f.tool))].join(", ");
  const pendingHuman: PendingHuman = {
    kind: "plan_review",
    reason: `approve plan version ${next.version}? ${hit.reason}`,
    planVersion: next.version,
    options: offered([...HELD_REVIEW_OPTIONS], typeof r.rt.planner.replan === "function"),
    context: {
      goal: r.state.goal,
      rule: hit.rule,
      failureClass: r.trigger.failureClass,
      tools,
      capabilities: hit.findings,
      diff: planDiff(r.plan, next),
      steps: next.steps.map((s) => ({ id: s.id, goal: s.goal, tool: s.tool ?? null })),
      proposal,
    },
  };
  if (r.trigger.stepId !== undefined) pendingHuman.stepId = r.trigger.stepId;
  return { decisions: decision, status: "awaiting_review", pendingHuman };
}
