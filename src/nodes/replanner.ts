/**
 * The replanner node: computes the scope, relabels facts, asks the Planner for replacement
 * steps for that scope only, validates and merges them, bumps the plan version, and writes a
 * replan record. Guardrails that only the replanner can see (backtrack depth and count,
 * no-progress, failed replans) escalate from here, with their rule ids in `decisions`.
 * The phases live in runtime/replan-*.ts; the guards are pure, in policy/replan-guards.ts.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../runtime/options.js";
import type { PlanManagerStateType, PlanManagerUpdate } from "../runtime/state.js";
import { enrichDraft } from "../plan/enrich.js";
import { isFinished } from "../plan/ready.js";
import type { Decision } from "../policy/decision.js";
import { formatIssues } from "../plan/validate.js";
import { fingerprint } from "../policy/scope.js";
import {
  backtrackDepthGuard,
  backtracksGuard,
  failedReplan,
  noProgressGuard,
  type GuardHit,
} from "../policy/replan-guards.js";
import { withRevalidation } from "../policy/replan-merge.js";
import { emit } from "../runtime/events.js";
import { escalationPayload } from "../runtime/interrupts.js";
import { chargeReplan, prepareReplan, validateReplanDraft, type Replan } from "../runtime/replan-context.js";
import { askPlanner } from "../runtime/replan-request.js";
import { recallReplan } from "../runtime/replan-memory.js";
import { applyReplan } from "../runtime/replan-version.js";
import { capabilityReview } from "../runtime/replan-review.js";

export function makeReplannerNode(rt: Runtime) {
  return async function replanner(
    state: PlanManagerStateType,
    config: LangGraphRunnableConfig,
  ): Promise<PlanManagerUpdate> {
    const r = prepareReplan(rt, state, config);
    if (!r) return {};
    const completed = r.affected.filter((s) => isFinished(state.steps[s.id])).map((s) => s.id);
    const deep = r.scope === "local" ? backtrackDepthGuard(completed, rt.policy) : undefined;
    if (deep) return escalate(r, deep);

    // Replan memory first (reuse: its draft; hint: the planner sees it); the draft is checked like any other.
    const answer = (await recallReplan(r)) ?? (await askPlanner(r));
    const budget = chargeReplan(state, r.usage);
    if ("failed" in answer) return escalate(r, answer.failed, { budget });
    const validation = validateReplanDraft(r, answer.draft);
    if (!validation.ok) return escalate(r, failedReplan("invalid_draft", formatIssues(validation.issues)), { budget });
    const proposed = enrichDraft(validation.draft, rt.metadataOf);
    const print = fingerprint(proposed.steps, r.assumption);
    const byPerson = r.trigger.by === "person" || r.trigger.rule.startsWith("human.");
    const stuck = noProgressGuard(
      print,
      fingerprint(r.affected, r.assumption),
      r.guards.fingerprints,
      r.assumption,
      byPerson,
    );
    if (stuck) return escalate(r, stuck, { budget });
    r.guards.fingerprints = [...r.guards.fingerprints, print];

    const kept = r.plan.steps.filter((s) => !r.affectedIds.includes(s.id)).map((s) => s.id);
    const { broken, labels } = r.falsification;
    const steps = withRevalidation(
      proposed.steps,
      r.plan.steps,
      r.affectedIds,
      labels.suspect,
      state.facts,
      broken,
      kept,
    );
    // Backtracking: a completed step that comes back is re-run; bounded per step.
    const rerun = steps.filter((s) => isFinished(state.steps[s.id]) && r.affectedIds.includes(s.id)).map((s) => s.id);
    const over = backtracksGuard(rerun, r.guards.backtracks, rt.policy);
    if (over) return escalate(r, over, { budget });
    r.guards.backtracks = { ...r.guards.backtracks };
    for (const id of rerun) r.guards.backtracks[id] = (r.guards.backtracks[id] ?? 0) + 1;
    // Last gate before a version: a replan may not widen what the run can do unseen (DESIGN §7.6).
    return applyReplan(r, { ...proposed, steps }, rerun, budget, capabilityReview(r, steps));
  };
}

/** A guard stopped the replan: the evidence stands (falsified, relabelled), a person decides. */
function escalate(r: Replan, hit: GuardHit, extra: PlanManagerUpdate = {}): PlanManagerUpdate {
  const decision: Decision = {
    seq: r.state.decisions.length + r.notes.length + 1,
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
  const pendingHuman = escalationPayload({ ...r.state, decisions: [...r.state.decisions, decision] }, decision);
  const { usage, guards } = r;
  return {
    usage,
    ...extra,
    decisions: [...r.notes, decision],
    guards,
    facts: r.falsification.labels.facts,
    status: "awaiting_human",
    pendingHuman,
    deviation: null,
  };
}
