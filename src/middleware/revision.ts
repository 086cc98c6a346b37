/**
 * A `write_plan` revision as a new plan version (pure): the model sends the whole plan again;
 * steps it hands back unchanged keep their records, changed ones run again, removed ones leave
 * their records to the history, and a step that committed a side effect is kept exactly as it
 * was (it never runs a second time). Assumptions are only appended, as in the graph.
 */
import { historyEntry, type PlanVersionEntry } from "../plan/history.js";
import type { ReplanRecord } from "../plan/schema/decision.js";
import type { Plan, PlanDraft } from "../plan/schema/plan.js";
import type { Step } from "../plan/schema/step.js";
import { sameStep } from "../policy/replan/merge.js";
import { undoneKeys } from "../policy/attempt/redo-key.js";
import { fingerprint } from "../policy/replan/scope.js";
import { isFinished } from "../plan/ready.js";
import type { AgentPlanValues, Trigger } from "./agent-state.js";

export interface Revision {
  plan: Plan;
  record: ReplanRecord;
  /** Step records to clear (null) for steps that will run again or were removed. */
  resets: Record<string, null>;
  history: PlanVersionEntry;
  /** Steps the draft changed or dropped that had committed a side effect: kept as they were. */
  keptCommitted: string[];
  /** Steps with a committed (not undone) effect that the draft dropped. */
  dropped: string[];
  /** Steps the revision adds or changes (what the capability guard reads). */
  added: Step[];
  /** The no-progress fingerprints of the replaced steps and of their proposed replacement. */
  replaced: string;
  proposed: string;
}

type RevisionState = Pick<AgentPlanValues, "steps" | "facts" | "sideEffects" | "compensations"> & { plan: Plan };

/**
 * `undone`: dropped steps whose effects are compensated (middleware/compensate.ts): they leave the
 * plan like any dropped step; every other dropped step with a committed effect is kept as it was.
 */
export function revise(
  state: RevisionState,
  draft: PlanDraft,
  trigger: Trigger | null,
  at: string,
  undone: ReadonlySet<string> = new Set(),
): Revision {
  const old = state.plan;
  const before = new Map(old.steps.map((s) => [s.id, s]));
  const { steps, keptCommitted, dropped } = keepCommitted(state, draft, undone);
  const known = new Set(old.assumptions.map((a) => a.id));
  const plan: Plan = {
    version: old.version + 1,
    steps,
    assumptions: [...old.assumptions, ...(draft.assumptions ?? []).filter((a) => !known.has(a.id))],
  };
  const ids = new Set(steps.map((s) => s.id));
  const added = steps.filter((s) => !sameStep(before.get(s.id), s));
  const removed = old.steps.filter((s) => !ids.has(s.id)).map((s) => s.id);
  const changed = added.filter((s) => before.has(s.id)).map((s) => s.id);
  const reset = [...changed, ...removed];
  const runs = Object.fromEntries(reset.filter((id) => state.steps[id]).map((id) => [id, state.steps[id]!]));
  const history: PlanVersionEntry = {
    ...historyEntry(old, plan),
    runs,
    notStarted: reset.filter((id) => !state.steps[id]),
  };
  const assumption = trigger?.assumption;
  const affected = trigger?.affected ?? old.steps.filter((s) => !isFinished(state.steps[s.id])).map((s) => s.id);
  return {
    plan,
    record: record(state, plan, { trigger, removed, changed, added, at }),
    resets: Object.fromEntries(Object.keys(runs).map((id) => [id, null])),
    history,
    keptCommitted,
    dropped,
    added,
    replaced: fingerprint(
      old.steps.filter((s) => affected.includes(s.id)),
      assumption,
    ),
    // What replaces the affected steps: the new plan's steps in their place, and any step added or changed.
    proposed: fingerprint(
      steps.filter((s) => affected.includes(s.id) || added.includes(s)),
      assumption,
    ),
  };
}

/**
 * The draft's steps with every step whose effect stands kept as it was: one the draft changed, and
 * one it dropped unless its effect is being undone (`undone`). An undone effect no longer stands:
 * its step may change or leave like any other.
 */
function keepCommitted(state: RevisionState, draft: PlanDraft, undone: ReadonlySet<string>) {
  const old = state.plan;
  const before = new Map(old.steps.map((s) => [s.id, s]));
  const undoneEffects = undoneKeys(state.compensations);
  const standing = state.sideEffects.filter((e) => !undoneEffects.has(e.idempotencyKey));
  const committed = new Set(standing.map((e) => e.stepId));
  const keptCommitted: string[] = [];
  const steps: Step[] = draft.steps.map((s) => {
    const was = before.get(s.id);
    if (!was || !committed.has(s.id) || sameStep(was, s)) return s;
    keptCommitted.push(s.id);
    return was;
  });
  const drafted = new Set(steps.map((s) => s.id));
  const dropped = old.steps.filter((s) => committed.has(s.id) && !drafted.has(s.id));
  const kept = dropped.filter((s) => !undone.has(s.id));
  keptCommitted.push(...kept.map((s) => s.id));
  steps.unshift(...kept);
  return { steps, keptCommitted, dropped: dropped.map((s) => s.id) };
}

interface Change {
  trigger: Trigger | null;
  removed: string[];
  changed: string[];
  added: Step[];
  at: string;
}

function record(state: RevisionState, plan: Plan, c: Change): ReplanRecord {
  const labels = Object.entries(state.facts);
  const keys = (label: string) => labels.filter(([, f]) => f.label === label).map(([k]) => k);
  const fresh = new Set(c.added.map((s) => s.id));
  const r: ReplanRecord = {
    trigger: c.trigger ? c.trigger.reason : "the model revised its plan",
    scope: c.trigger?.scope ?? "global",
    fromVersion: state.plan.version,
    toVersion: plan.version,
    invalidatedSteps: c.removed,
    preservedSteps: plan.steps.filter((s) => !fresh.has(s.id)).map((s) => s.id),
    newSteps: c.added.filter((s) => !c.changed.includes(s.id)).map((s) => s.id),
    facts: { trusted: keys("trusted"), suspect: keys("suspect"), invalidated: keys("invalidated") },
    at: c.at,
  };
  if (c.changed.length > 0) r.changedSteps = c.changed;
  if (c.trigger?.assumption !== undefined) r.brokenAssumption = c.trigger.assumption;
  return r;
}
