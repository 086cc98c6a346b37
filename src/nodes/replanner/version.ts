/**
 * A replan's result as state: the merged plan version, step records reset for the replaced
 * steps (this version's attempts kept in history), and the replan record. A replan the
 * capability guard held is not a version yet: it waits in the plan review's payload, and only
 * a person's approval commits it (`commitVersion`), so a rejected proposal never widens what
 * later replans count as already used.
 */
import type { PendingHuman, PlanManagerStateType, PlanManagerUpdate } from "../../runtime/state.js";
import { hasRun, historyEntry } from "../../plan/history.js";
import type { Plan, PlanDraft, ReplanRecord, Step, StepRun } from "../../plan/schema.js";
import type { CapabilityHit } from "../../policy/capability.js";
import { mergeSteps, sameStep } from "../../policy/replan-merge.js";
import { emit } from "../../runtime/events.js";
import { PLAN_REVIEW_OPTIONS } from "../../runtime/interrupts.js";
import type { Replan } from "./context.js";
import { holdForReview } from "../shared/plan-review.js";

/** A proposed plan version: what `commitVersion` turns into state. */
export interface ProposedVersion {
  plan: Plan;
  record: ReplanRecord;
  /** Steps of the previous version the replan replaces. */
  affected: string[];
  /** Ids of the replacement steps (their records start afresh). */
  replacement: string[];
  /** Scope changes this (global) replan planned for; they are cleared when it is committed. */
  scopeChanges: string[];
}

/** The new plan version — or, when the capability guard holds it, a plan review of the proposal. */
export function applyReplan(
  r: Replan,
  replacement: PlanDraft,
  rerun: readonly string[],
  budget: PlanManagerUpdate["budget"],
  // Required, not optional: every path to a new version has to say what the capability guard found.
  held: CapabilityHit | undefined,
): PlanManagerUpdate {
  const { state, plan: previous, affectedIds, guards } = r;
  const version = previous.version + 1;
  const merged = mergeSteps(previous.steps, affectedIds, replacement.steps);
  const known = new Set(previous.assumptions.map((a) => a.id));
  const next: Plan = {
    version,
    steps: merged,
    assumptions: [...previous.assumptions, ...(replacement.assumptions ?? []).filter((a) => !known.has(a.id))],
  };
  if (replacement.rationale !== undefined) next.rationale = replacement.rationale;
  // A repair keeps the horizon. A global replan re-plans the rest of the goal: its draft says how far
  // it reaches, and like any draft it is complete unless it says otherwise (docs/architecture.md "Long goals").
  const complete = r.scope === "global" ? replacement.complete : previous.complete;
  if (complete === false) next.complete = false;
  if (r.assumption !== undefined) guards.lastReplanAt = { ...guards.lastReplanAt, [r.assumption]: guards.successes };
  const proposal: ProposedVersion = {
    plan: next,
    record: replanRecord(r, next, replacement.steps, rerun),
    affected: [...affectedIds],
    replacement: replacement.steps.map((s) => s.id),
    scopeChanges: r.scope === "global" ? [...state.scopeChanges] : [],
  };
  const update: PlanManagerUpdate = { facts: r.falsification.labels.facts, guards, usage: r.usage, budget };
  update.deviation = null;
  // Replan memory's decisions (reused, hinted, passed over) come first, whatever happens next.
  if (r.notes.length > 0) update.decisions = r.notes;
  if (held) return { ...update, ...holdForReview(r, proposal, held) };
  emit(r.config, { type: "replan", record: proposal.record });
  Object.assign(update, commitVersion(state, proposal), { status: "running" });
  if (r.rt.reviewReplans) {
    update.status = "awaiting_review";
    update.pendingHuman = reviewPayload(state.goal, next, proposal.record);
  }
  return update;
}

/** The state writes of a proposed version: plan, history, reset records, the replan record. */
export function commitVersion(state: PlanManagerStateType, proposal: ProposedVersion): PlanManagerUpdate {
  const { plan: next, affected } = proposal;
  const previous = state.plan!;
  const nextIds = new Set(next.steps.map((s) => s.id));
  const stepRuns: Record<string, StepRun> = {};
  for (const id of affected)
    if (!nextIds.has(id)) stepRuns[id] = { ...(state.steps[id] ?? { attempts: 0 }), status: "invalidated" };
  // Idempotency keys name the operation (plan/operation.ts), so a reset record carries nothing over.
  for (const id of proposal.replacement) stepRuns[id] = { status: "pending", attempts: 0 };
  // The attempts of this version stay readable after the reset (`runsAtVersion`, the debug view, the report):
  // the records this replan resets or removes, and which steps had not started (so later runs don't show here).
  const history = historyEntry(previous, next);
  const ended = Object.keys(stepRuns).filter((id) => hasRun(state.steps[id]));
  if (ended.length > 0) history.runs = Object.fromEntries(ended.map((id) => [id, state.steps[id]!]));
  const notStarted = previous.steps.filter((s) => !hasRun(state.steps[s.id])).map((s) => s.id);
  if (notStarted.length > 0) history.notStarted = notStarted;
  const update: PlanManagerUpdate = { plan: next, planHistory: history, steps: stepRuns, replans: proposal.record };
  // Only the scope changes this replan planned for: one that arrived while it waited is still to plan.
  const planned = proposal.scopeChanges;
  if (planned.length > 0 && state.scopeChanges.every((c) => planned.includes(c))) update.scopeChanges = [];
  return update;
}

function reviewPayload(goal: string, next: Plan, record: ReplanRecord): PendingHuman {
  const steps = next.steps.map((s) => ({ id: s.id, goal: s.goal, tool: s.tool ?? null }));
  return {
    kind: "plan_review",
    reason: `approve plan version ${next.version} (${record.scope} replan: ${record.trigger})`,
    planVersion: next.version,
    options: [...PLAN_REVIEW_OPTIONS],
    context: { goal, replan: record, steps },
  };
}

function replanRecord(r: Replan, next: Plan, replacement: readonly Step[], rerun: readonly string[]): ReplanRecord {
  const { plan: previous, affectedIds, trigger, assumption } = r;
  const nextIds = new Set(next.steps.map((s) => s.id));
  const replacedIds = new Set(replacement.map((s) => s.id));
  const before = new Map(previous.steps.map((s) => [s.id, s]));
  const { labels } = r.falsification;
  const record: ReplanRecord = {
    trigger: `${trigger.rule}: ${trigger.reason}`,
    ...(assumption !== undefined ? { brokenAssumption: assumption } : {}),
    scope: r.scope,
    fromVersion: previous.version,
    toVersion: next.version,
    invalidatedSteps: affectedIds.filter((id) => !nextIds.has(id)),
    // Kept: untouched, or handed back by the planner exactly as it was (it still re-runs if it was in scope).
    preservedSteps: next.steps.filter((s) => !replacedIds.has(s.id) || sameStep(before.get(s.id), s)).map((s) => s.id),
    newSteps: replacement.filter((s) => !before.has(s.id)).map((s) => s.id),
    facts: { trusted: labels.trusted, suspect: labels.suspect, invalidated: labels.invalidated },
    at: r.at(),
  };
  if (rerun.length > 0) record.revalidatedSteps = [...rerun];
  if (r.memory) Object.assign(record, { source: r.memory.source, memoryKey: r.memory.key });
  if (r.memory?.revision) record.memoryRevision = r.memory.revision;
  // The answer remembered is the draft's own steps: those kept for it are kept again where it is reused.
  if (r.memory) record.memorySteps = replacement.map((s) => s.id).filter((id) => !r.kept?.includes(id));
  const handedBack = (record.memorySteps ?? []).filter((id) => affectedIds.includes(id));
  if (handedBack.length > 0)
    record.memoryKept = Object.fromEntries(handedBack.map((id) => [id, affectedIds.indexOf(id)]));
  const changedSteps = replacement.filter((s) => before.has(s.id) && !sameStep(before.get(s.id), s)).map((s) => s.id);
  if (changedSteps.length > 0) record.changedSteps = changedSteps;
  const others = (previous.steps.find((s) => s.id === trigger.stepId)?.assumptions ?? []).filter(
    (a) => a !== assumption,
  );
  if (trigger.failureClass === "success_signal_unmet" && others.length > 0) record.suspectAssumptions = others;
  return record;
}
