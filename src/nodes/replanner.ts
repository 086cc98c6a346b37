/**
 * The replanner node: awaits replan memory and the planner for a replacement of the scope, then
 * applies what the pure transition (policy/replan.ts) makes of it — an escalation with the
 * guard's rule id, a proposal held for a person, or plan version N+1. The phases that await live
 * in nodes/replanner/*.ts; the guards are pure, in policy/replan-guards.ts.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../runtime/options.js";
import type { PlanManagerStateType, PlanManagerUpdate } from "../runtime/state.js";
import { replanPrecheck, replanTransition } from "../policy/replan.js";
import { chargeReplan, prepareReplan } from "./replanner/context.js";
import { draftReplacement } from "./replanner/draft.js";
import { applyOutcome, capabilityReview, snapshotOf } from "./replanner/apply.js";

export function makeReplannerNode(rt: Runtime) {
  return async function replanner(
    state: PlanManagerStateType,
    config: LangGraphRunnableConfig,
  ): Promise<PlanManagerUpdate> {
    const r = prepareReplan(rt, state, config);
    if (!r) return {};
    const early = replanPrecheck(snapshotOf(r), rt.policy);
    if (early) return applyOutcome(r, [], early);
    // Replan memory first (reuse: its draft; hint: the planner sees it); the draft is checked like any other.
    const { drafted, recall } = await draftReplacement(r);
    const budget = chargeReplan(state, r.usage);
    // Last gate before a version: a replan may not widen what the run can do unseen (docs/architecture.md
    // "Untrusted facts").
    const held = "hit" in drafted ? undefined : capabilityReview(r, drafted.steps, recall);
    return applyOutcome(r, recall.notes, replanTransition(snapshotOf(r, recall), drafted, held), budget);
  };
}
