/**
 * Applies a replan's outcome (policy/replan.ts) to state: an escalation with its payload, a
 * proposal held in a plan review, or the committed version (reviewed first under
 * `reviewReplans`). A replan the capability guard held is not a version yet: only a person's
 * approval commits it, so a rejected proposal never widens what later replans count as used.
 */
import type { PlanManagerUpdate } from "../../runtime/state.js";
import { mergeSteps } from "../../policy/replan-merge.js";
import type { CapabilityHit } from "../../policy/capability.js";
import { commitVersion, type ReplanOutcome, type ReplanSnapshot } from "../../policy/replan.js";
import type { Step } from "../../plan/schema.js";
import { leaves } from "../../policy/capability-taint.js";
import { emit } from "../../runtime/events.js";
import { escalationPayload } from "../../runtime/interrupts.js";
import { holdProposal, reviewNewSteps, versionReview } from "../shared/plan-review.js";
import type { Decision } from "../../policy/decision.js";
import type { Replan } from "./context.js";
import type { Recall } from "./recall.js";

/**
 * Whether the merged steps may become a version without a person, per `policy.replanTools`. Another
 * thread's answer from replan memory, reused or shown as a hint, is untrusted text here: it may
 * carry what that thread read.
 */
export function capabilityReview(r: Replan, replacement: readonly Step[], recall?: Recall): CapabilityHit | undefined {
  const learned = recall?.learned === true;
  const remembered = learned && recall?.memory?.source === "memory";
  const hinted = learned ? (recall?.hints ?? []).flatMap((h) => leaves(h.steps)) : [];
  const untrusted = hinted.map((text) => ({ text, source: "replan memory" as const }));
  const proposed = mergeSteps(r.plan.steps, r.affectedIds, replacement);
  return reviewNewSteps(r.rt, r.state, replacement, proposed, { remembered, untrusted });
}

/** The snapshot the pure transition reads, taken once the draft is in (memory may have answered). */
export function snapshotOf(r: Replan, recall: Recall = { notes: [] }): ReplanSnapshot {
  const { state } = r;
  return {
    plan: r.plan,
    steps: state.steps,
    decisions: state.decisions,
    notes: recall.notes,
    scopeChanges: state.scopeChanges,
    trigger: r.trigger,
    scope: r.scope,
    assumption: r.assumption,
    affectedIds: r.affectedIds,
    guards: r.guards,
    falsification: r.falsification,
    memory: recall.memory,
    at: r.at(),
  };
}

/** The outcome as state writes; `budget` once the planner (or memory) was asked. */
export function applyOutcome(
  r: Replan,
  notes: readonly Decision[],
  outcome: ReplanOutcome,
  budget?: PlanManagerUpdate["budget"],
): PlanManagerUpdate {
  const { state } = r;
  const facts = r.falsification.labels.facts;
  if (outcome.kind === "escalate") {
    const { decision } = outcome;
    emit(r.config, { type: "decision", decision });
    const pendingHuman = escalationPayload({ ...state, decisions: [...state.decisions, decision] }, decision);
    return {
      usage: r.usage,
      ...(budget !== undefined ? { budget } : {}),
      decisions: [...notes, decision],
      guards: outcome.guards,
      facts,
      status: "awaiting_human" as const,
      pendingHuman,
      deviation: null,
    } satisfies PlanManagerUpdate;
  }
  const update: PlanManagerUpdate = { facts, guards: outcome.guards, usage: r.usage, budget, deviation: null };
  // Replan memory's decisions (reused, hinted, passed over) come first, whatever happens next.
  if (notes.length > 0) update.decisions = [...notes];
  const { proposal } = outcome;
  if (outcome.kind === "hold") {
    const held = holdProposal(
      r.rt,
      state,
      r.config,
      { decision: outcome.decision, notes: notes },
      proposal,
      outcome.hit,
    );
    return { ...update, ...held };
  }
  emit(r.config, { type: "replan", record: proposal.record });
  Object.assign(update, commitVersion(state, proposal), { status: "running" });
  if (!r.rt.reviewReplans) return update;
  const { plan: next, record } = proposal;
  const reason = `approve plan version ${next.version} (${record.scope} replan: ${record.trigger})`;
  return {
    ...update,
    status: "awaiting_review" as const,
    pendingHuman: versionReview(r.rt, state.goal, next, record, reason),
  };
}
