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
import { isFinished } from "../plan/ready.js";
import { backtrackDepthGuard, type GuardHit } from "../policy/replan-guards.js";
import { emit } from "../runtime/events.js";
import { escalationPayload } from "../runtime/interrupts.js";
import { chargeReplan, prepareReplan, type Replan } from "./replanner/context.js";
import { draftReplacement } from "./replanner/draft.js";
import { applyReplan } from "./replanner/version.js";
import { capabilityReview } from "./shared/plan-review.js";
import { decide } from "../policy/decide.js";

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
    const shaped = await draftReplacement(r);
    const budget = chargeReplan(state, r.usage);
    if ("hit" in shaped) return escalate(r, shaped.hit, { budget });
    const { proposed, steps, rerun } = shaped;
    r.guards.fingerprints = [...r.guards.fingerprints, shaped.print];
    r.guards.backtracks = { ...r.guards.backtracks };
    for (const id of rerun) r.guards.backtracks[id] = (r.guards.backtracks[id] ?? 0) + 1;
    // Last gate before a version: a replan may not widen what the run can do unseen (docs/architecture.md "Untrusted
    // facts").
    return applyReplan(r, { ...proposed, steps }, rerun, budget, capabilityReview(r, steps));
  };
}

/** A guard stopped the replan: the evidence stands (falsified, relabelled), a person decides. */
function escalate(r: Replan, hit: GuardHit, extra: PlanManagerUpdate = {}): PlanManagerUpdate {
  const decision = decide(hit.rule, {
    after: r.state.decisions.length + r.notes.length,
    stepId: r.trigger.stepId,
    attempt: r.trigger.attempt,
    failureClass: r.trigger.failureClass,
    reason: hit.reason,
    planVersion: r.plan.version,
    at: r.at(),
    brokenAssumption: r.assumption,
  });
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
