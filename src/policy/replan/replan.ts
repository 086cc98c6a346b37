/**
 * The replan as a pure transition (docs/architecture.md "The replan"): from one replan's snapshot
 * and its drafted replacement (or the guard that stopped it) to one of three outcomes — escalate
 * with the guard's rule, hold the proposal for a person (the capability guard), or commit plan
 * version N+1. Nothing here awaits, writes or reads a clock: the time comes in the snapshot, and
 * the replanner node applies the outcome (events, payloads).
 */
import { hasRun, historyEntry, type PlanVersionEntry } from "../../plan/history.js";
import type { ReplanRecord } from "../../plan/schema/decision.js";
import type { Plan, PlanDraft } from "../../plan/schema/plan.js";
import type { StepRun } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import type { CapabilityHit } from "../capability/guard.js";
import { decide } from "../ladder/decide.js";
import type { Decision } from "../ladder/decision.js";
import { backtrackDepthGuard, type GuardHit, type ReplanGuards } from "../ladder/guards.js";
import { isFinished } from "../../plan/ready.js";
import type { ResolvedPolicy } from "../options.js";
import { mergeSteps, sameStep } from "./merge.js";
import type { Falsification } from "../trust/trust.js";
import type { Abandoned } from "../compensation/abandoned.js";
import type { CompensationRecord } from "../../plan/schema/run.js";

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

/** Where a replan's draft came from, when replan memory was consulted. */
export interface ReplanSource {
  key: string;
  source: "planner" | "memory";
  revision?: string;
}

/** One replan, read once: what the transition needs and nothing it could change behind its back. */
export interface ReplanSnapshot {
  plan: Plan;
  /** Step records of the run. */
  steps: Readonly<Record<string, StepRun>>;
  /** Decisions in state (for `seq`), and those this replan wrote before its outcome. */
  decisions: readonly Decision[];
  notes: readonly Decision[];
  scopeChanges: readonly string[];
  trigger: Decision;
  scope: "local" | "global";
  assumption: string | undefined;
  affectedIds: readonly string[];
  guards: ReplanGuards;
  falsification: Falsification;
  memory?: ReplanSource | undefined;
  at: string;
}

/** A draft that passed every check: its own steps, the steps as they enter the plan, re-runs, its fingerprint. */
export interface CheckedDraft {
  proposed: PlanDraft;
  steps: Step[];
  rerun: string[];
  print: string;
  /** Steps of the scope the draft left out that stay (policy/replan/keep.ts): not part of its answer. */
  kept?: readonly string[];
}

export type ReplanOutcome =
  | { kind: "escalate"; decision: Decision; guards: ReplanGuards }
  | { kind: "hold"; decision: Decision; proposal: ProposedVersion; hit: CapabilityHit; guards: ReplanGuards }
  | { kind: "commit"; proposal: ProposedVersion; guards: ReplanGuards }
  /**
   * The version would abandon committed side effects that have no `compensate` (policy/replan/compensation-gate.ts):
   * held for a person, who keeps them (the version commits) or aborts.
   */
  | { kind: "keep-effects"; decision: Decision; proposal: ProposedVersion; guards: ReplanGuards; missing: Abandoned[] };

/** Before any draft: a local replan that would re-run too many completed steps escalates at once. */
export function replanPrecheck(s: ReplanSnapshot, policy: ResolvedPolicy): ReplanOutcome | undefined {
  if (s.scope !== "local") return undefined;
  const affected = s.plan.steps.filter((step) => s.affectedIds.includes(step.id));
  const completed = affected.filter((step) => isFinished(s.steps[step.id])).map((step) => step.id);
  const deep = backtrackDepthGuard(completed, policy);
  return deep ? { kind: "escalate", decision: guardDecision(s, deep), guards: s.guards } : undefined;
}

/**
 * The outcome of one replan. `drafted` is the checked draft, or the guard that stopped the replan;
 * `held` is what the capability guard found on the merged steps (required: every path to a version says).
 */
export function replanTransition(
  s: ReplanSnapshot,
  drafted: CheckedDraft | { hit: GuardHit },
  held: CapabilityHit | undefined,
): ReplanOutcome {
  if ("hit" in drafted) return { kind: "escalate", decision: guardDecision(s, drafted.hit), guards: s.guards };
  const { proposed, steps, rerun, print } = drafted;
  const backtracks = { ...s.guards.backtracks };
  for (const id of rerun) backtracks[id] = (backtracks[id] ?? 0) + 1;
  const guards: ReplanGuards = { ...s.guards, fingerprints: [...s.guards.fingerprints, print], backtracks };
  if (s.assumption !== undefined) guards.lastReplanAt = { ...guards.lastReplanAt, [s.assumption]: guards.successes };
  const proposal = proposeVersion(s, { ...proposed, steps }, rerun, drafted.kept);
  if (!held) return { kind: "commit", proposal, guards };
  return { kind: "hold", decision: guardDecision(s, held), proposal, hit: held, guards };
}

/** The decision of a guard that stops this replan: the trigger's step and class, after the replan's notes. */
export function guardDecision(s: ReplanSnapshot, hit: Pick<GuardHit, "rule" | "reason">): Decision {
  return decide(hit.rule, {
    after: s.decisions.length + s.notes.length,
    stepId: s.trigger.stepId,
    attempt: s.trigger.attempt,
    failureClass: s.trigger.failureClass,
    reason: hit.reason,
    planVersion: s.plan.version,
    at: s.at,
    brokenAssumption: s.assumption,
  });
}

/** The merged plan version N+1 and its replan record. */
export function proposeVersion(
  s: ReplanSnapshot,
  replacement: PlanDraft,
  rerun: readonly string[],
  kept: readonly string[] = [],
): ProposedVersion {
  const previous = s.plan;
  const known = new Set(previous.assumptions.map((a) => a.id));
  const next: Plan = {
    version: previous.version + 1,
    steps: mergeSteps(previous.steps, [...s.affectedIds], replacement.steps),
    assumptions: [...previous.assumptions, ...(replacement.assumptions ?? []).filter((a) => !known.has(a.id))],
  };
  if (replacement.rationale !== undefined) next.rationale = replacement.rationale;
  // A repair keeps the horizon. A global replan re-plans the rest of the goal: its draft says how far
  // it reaches, and like any draft it is complete unless it says otherwise (docs/architecture.md "Long goals").
  const complete = s.scope === "global" ? replacement.complete : previous.complete;
  if (complete === false) next.complete = false;
  return {
    plan: next,
    record: replanRecord(s, next, replacement.steps, rerun, kept),
    affected: [...s.affectedIds],
    replacement: replacement.steps.map((step) => step.id),
    scopeChanges: s.scope === "global" ? [...s.scopeChanges] : [],
  };
}

/** What committing a version writes: plan, history, reset records, the replan record. */
export interface VersionWrites {
  plan: Plan;
  planHistory: PlanVersionEntry;
  steps: Record<string, StepRun>;
  replans: ReplanRecord;
  scopeChanges?: string[];
  /** The run's compensations with those of the effects this version abandons (policy/replan/compensation-gate.ts). */
  compensations?: CompensationRecord[];
}

/** The state writes of a proposed version. */
export function commitVersion(
  state: { plan?: Plan | null | undefined; steps: Readonly<Record<string, StepRun>>; scopeChanges: readonly string[] },
  proposal: ProposedVersion,
): VersionWrites {
  const { plan: next, affected } = proposal;
  const previous = state.plan!;
  const nextIds = new Set(next.steps.map((step) => step.id));
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
  const notStarted = previous.steps.filter((step) => !hasRun(state.steps[step.id])).map((step) => step.id);
  if (notStarted.length > 0) history.notStarted = notStarted;
  const writes: VersionWrites = { plan: next, planHistory: history, steps: stepRuns, replans: proposal.record };
  // Only the scope changes this replan planned for: one that arrived while it waited is still to plan.
  const planned = proposal.scopeChanges;
  if (planned.length > 0 && state.scopeChanges.every((c) => planned.includes(c))) writes.scopeChanges = [];
  return writes;
}

function replanRecord(
  s: ReplanSnapshot,
  next: Plan,
  replacement: readonly Step[],
  rerun: readonly string[],
  kept: readonly string[],
): ReplanRecord {
  const { plan: previous, affectedIds, trigger, assumption } = s;
  const nextIds = new Set(next.steps.map((step) => step.id));
  const replacedIds = new Set(replacement.map((step) => step.id));
  const before = new Map(previous.steps.map((step) => [step.id, step]));
  const { labels } = s.falsification;
  const record: ReplanRecord = {
    trigger: `${trigger.rule}: ${trigger.reason}`,
    ...(assumption !== undefined ? { brokenAssumption: assumption } : {}),
    scope: s.scope,
    fromVersion: previous.version,
    toVersion: next.version,
    invalidatedSteps: affectedIds.filter((id) => !nextIds.has(id)),
    // Kept: untouched, or handed back by the planner exactly as it was (it still re-runs if it was in scope).
    preservedSteps: next.steps
      .filter((step) => !replacedIds.has(step.id) || sameStep(before.get(step.id), step))
      .map((step) => step.id),
    newSteps: replacement.filter((step) => !before.has(step.id)).map((step) => step.id),
    facts: { trusted: labels.trusted, suspect: labels.suspect, invalidated: labels.invalidated },
    at: s.at,
  };
  if (rerun.length > 0) record.revalidatedSteps = [...rerun];
  Object.assign(record, memoryFields(s, replacement, kept));
  const changed = replacement.filter((step) => before.has(step.id) && !sameStep(before.get(step.id), step));
  if (changed.length > 0) record.changedSteps = changed.map((step) => step.id);
  const others = (previous.steps.find((step) => step.id === trigger.stepId)?.assumptions ?? []).filter(
    (a) => a !== assumption,
  );
  if (trigger.failureClass === "success_signal_unmet" && others.length > 0) record.suspectAssumptions = others;
  return record;
}

/** Replan memory's part of the record: where the draft came from, and the answer remembered. */
function memoryFields(s: ReplanSnapshot, replacement: readonly Step[], kept: readonly string[]): Partial<ReplanRecord> {
  if (!s.memory) return {};
  const fields: Partial<ReplanRecord> = { source: s.memory.source, memoryKey: s.memory.key };
  if (s.memory.revision) fields.memoryRevision = s.memory.revision;
  // The answer remembered is the draft's own steps: those kept for it are kept again where it is reused.
  fields.memorySteps = replacement.map((step) => step.id).filter((id) => !kept.includes(id));
  const handedBack = fields.memorySteps.filter((id) => s.affectedIds.includes(id));
  if (handedBack.length > 0)
    fields.memoryKept = Object.fromEntries(handedBack.map((id) => [id, s.affectedIds.indexOf(id)]));
  return fields;
}
