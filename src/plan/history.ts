/**
 * Plan versions as a compact history of reverse diffs. The current plan is in state; each
 * replan appends what the previous version had that the new one does not (the old definitions
 * of removed or changed steps, the old order, the old assumption count). So the success path
 * stores no history at all, and any earlier version can still be rebuilt.
 */
import { canonical } from "./diff.js";
import type { Plan } from "./schema/plan.js";
import type { StepRun } from "./schema/run.js";
import type { Step } from "./schema/step.js";

/** One entry of `planHistory`: what it takes to rebuild the version before it. */
export interface PlanVersionEntry {
  /** The version this entry leads to; applying it backwards gives `version - 1`. */
  version: number;
  /** Definitions, in version - 1, of steps that version `version` removed or changed. */
  replaced: Step[];
  /** Step order of version - 1; absent when that order is the first `keptCount` steps of this version. */
  order?: string[];
  /**
   * An extension's entry: version - 1 was the first `keptCount` steps of this version, in order (it
   * only appended). A prefix length, so the entry does not grow with the plan
   * (docs/decisions/0050-compact-extension-records.md).
   */
  keptCount?: number;
  /** Number of assumptions in version - 1 (assumptions are only ever appended). */
  assumptionCount: number;
  rationale?: string;
  /** Step records as they stood at the end of version - 1, for the steps this replan reset or removed. */
  runs?: Record<string, StepRun>;
  /** Steps of version - 1 that had not started when it ended (no record, or an untouched one). */
  notStarted?: string[];
}

export function historyEntry(previous: Plan, next: Plan): PlanVersionEntry {
  // An extension hands every earlier step back as the same object, in place: nothing was replaced.
  const appended = previous.steps.every((s, i) => next.steps[i] === s);
  const after = appended ? new Map<string, Step>() : new Map(next.steps.map((s) => [s.id, s]));
  const entry: PlanVersionEntry = appended
    ? {
        version: next.version,
        replaced: [],
        keptCount: previous.steps.length,
        assumptionCount: previous.assumptions.length,
      }
    : {
        version: next.version,
        replaced: previous.steps.filter((s) => {
          const now = after.get(s.id);
          return now === undefined || (now !== s && canonical(now) !== canonical(s));
        }),
        order: previous.steps.map((s) => s.id),
        assumptionCount: previous.assumptions.length,
      };
  if (previous.rationale !== undefined) entry.rationale = previous.rationale;
  return entry;
}

/** Rebuilds plan version `version` from the current plan and the history. */
export function planAtVersion(
  state: { plan?: Plan | undefined; planHistory: readonly PlanVersionEntry[] },
  version: number,
): Plan | undefined {
  const current = state.plan;
  if (!current || version < 1 || version > current.version) return undefined;
  let plan: Plan = current;
  for (const entry of [...state.planHistory].reverse()) {
    if (entry.version <= version) break;
    plan = {
      version: entry.version - 1,
      steps: stepsBefore(entry, plan.steps),
      assumptions: plan.assumptions.slice(0, entry.assumptionCount),
      ...(entry.rationale !== undefined ? { rationale: entry.rationale } : {}),
    };
  }
  return plan.version === version ? plan : undefined;
}

/** The steps of version `entry.version - 1`, given those of `entry.version`. */
function stepsBefore(entry: PlanVersionEntry, steps: readonly Step[]): Step[] {
  if (entry.order === undefined) return steps.slice(0, entry.keptCount ?? steps.length);
  const byId = new Map(steps.map((s) => [s.id, s]));
  for (const old of entry.replaced) byId.set(old.id, old);
  return entry.order.map((id) => byId.get(id)).filter((s): s is Step => s !== undefined);
}

/**
 * The step order of the version before each entry (`entry.order`, or the kept prefix of the
 * version after it), walking back from the current plan once.
 */
export function ordersBefore(state: {
  plan?: Plan | undefined;
  planHistory: readonly PlanVersionEntry[];
}): Map<PlanVersionEntry, readonly string[]> {
  const orders = new Map<PlanVersionEntry, readonly string[]>();
  let order: readonly string[] = state.plan?.steps.map((s) => s.id) ?? [];
  for (const entry of [...state.planHistory].sort((a, b) => b.version - a.version)) {
    order = entry.order ?? order.slice(0, entry.keptCount ?? order.length);
    orders.set(entry, order);
  }
  return orders;
}

/**
 * Every step definition any plan version had, each once: a definition of version v is either
 * still in version v + 1 or among the `replaced` of the entry that leads to it, so the current
 * plan and every entry's `replaced` hold them all. Linear in the plan and its history, where
 * rebuilding each version is linear per version (docs/decisions/0030-long-runs-per-step-cost.md).
 */
export function stepsOfEveryVersion(state: {
  plan?: Plan | undefined;
  planHistory: readonly PlanVersionEntry[];
}): Step[] {
  if (!state.plan) return [];
  return [...state.plan.steps, ...state.planHistory.flatMap((entry) => entry.replaced)];
}

/**
 * The steps of plan version 1 — the plan the caller vouched for, or the planner's first answer to
 * the goal — in one pass: a step's version-1 definition is in the `replaced` of the first entry
 * that changed or removed it, or else still in the current plan.
 */
export function originalSteps(state: { plan?: Plan | undefined; planHistory: readonly PlanVersionEntry[] }): Step[] {
  if (!state.plan) return [];
  const first = state.planHistory[0];
  if (!first) return [...state.plan.steps];
  const defs = new Map<string, Step>();
  for (const entry of state.planHistory) for (const s of entry.replaced) if (!defs.has(s.id)) defs.set(s.id, s);
  const order = firstOrder(state.plan, state.planHistory);
  // Only the ids still wanted, and the scan stops when all are found: a rolling plan's first
  // version is its first steps (docs/decisions/0030-long-runs-per-step-cost.md).
  const wanted = new Set(order.filter((id) => !defs.has(id)));
  const current = new Map<string, Step>();
  for (const s of state.plan.steps) {
    if (current.size === wanted.size) break;
    if (wanted.has(s.id) && !current.has(s.id)) current.set(s.id, s);
  }
  return order.map((id) => defs.get(id) ?? current.get(id)).filter((s): s is Step => s !== undefined);
}

/**
 * Version 1's step order. An extension's entry says only "the first N steps of the next version",
 * so a run that only appended reads a prefix of the current plan without walking or copying
 * the history's orders (docs/decisions/0050-compact-extension-records.md).
 */
function firstOrder(plan: Plan, history: readonly PlanVersionEntry[]): readonly string[] {
  // The walk back from the newest entry: a prefix of `base`, until an entry with an explicit order.
  let base: readonly string[] | undefined;
  let length = plan.steps.length;
  for (let i = history.length - 1; i >= 0; i--) {
    const entry = history[i]!;
    if (entry.order !== undefined) [base, length] = [entry.order, entry.order.length];
    else length = Math.min(length, entry.keptCount ?? length);
  }
  const ids: string[] = [];
  for (let i = 0; i < length; i++) ids.push(base ? base[i]! : plan.steps[i]!.id);
  return ids;
}

/** Whether a record holds anything of a run: a step whose record is absent or untouched has not started. */
export function hasRun(run: StepRun | undefined): run is StepRun {
  return run !== undefined && (run.attempts > 0 || run.status !== "pending");
}

type RunState = {
  plan?: Plan | undefined;
  steps: Readonly<Record<string, StepRun>>;
  planHistory: readonly PlanVersionEntry[];
};

/**
 * The record of every step of plan version `version` as it stood when that version ended (or
 * stands now, for the current version); a step without a record had not started. Each later
 * replan's entry puts back the records it reset or removed, and takes away the steps that had
 * not started yet, so later attempts never show in an earlier version.
 */
export function runsAtVersion(state: RunState, version: number): Record<string, StepRun> {
  const plan = planAtVersion(state, version);
  if (!plan) return {};
  const runs: Record<string, StepRun> = { ...state.steps };
  for (const entry of [...state.planHistory].reverse()) {
    if (entry.version <= version) break;
    Object.assign(runs, entry.runs ?? {});
    for (const id of entry.notStarted ?? []) delete runs[id];
  }
  return Object.fromEntries(plan.steps.filter((s) => runs[s.id] !== undefined).map((s) => [s.id, runs[s.id]!]));
}

/** A step record with the plan version its attempts were made in; `current` for the records in `steps`. */
export interface VersionedRun {
  version: number;
  stepId: string;
  run: StepRun;
  current: boolean;
}

/**
 * Every record the run's steps have had, oldest plan version first: those earlier replans reset
 * or removed (kept in `planHistory`), then the current ones. A record belongs to the version
 * in which its step last started afresh: version 1, or the latest replan before it that added
 * the step, reset its record or found it not yet started.
 */
export function runHistory(state: RunState): VersionedRun[] {
  const entries = [...state.planHistory].sort((a, b) => a.version - b.version);
  const orders = ordersBefore(state);
  const members = new Map<PlanVersionEntry, Set<string>>();
  const before = (e: PlanVersionEntry, stepId: string) => {
    let set = members.get(e);
    if (set === undefined) members.set(e, (set = new Set(orders.get(e))));
    return set.has(stepId);
  };
  const startedIn = (stepId: string, upTo: number): number => {
    let version = 1;
    for (const e of entries) {
      if (e.version > upTo) break;
      const fresh = e.runs?.[stepId] !== undefined || (e.notStarted ?? []).includes(stepId) || !before(e, stepId);
      if (fresh) version = e.version;
    }
    return version;
  };
  const earlier = entries.flatMap((e) =>
    Object.entries(e.runs ?? {}).map(([stepId, run]) => ({
      version: startedIn(stepId, e.version - 1),
      stepId,
      run,
      current: false,
    })),
  );
  const now = state.plan?.version ?? 1;
  const current = Object.entries(state.steps).map(([stepId, run]) => ({
    version: startedIn(stepId, now),
    stepId,
    run,
    current: true,
  }));
  return [...earlier, ...current];
}
