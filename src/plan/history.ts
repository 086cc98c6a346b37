/**
 * Plan versions as a compact history of reverse diffs. The current plan is in state; each
 * replan appends what the previous version had that the new one does not (the old definitions
 * of removed or changed steps, the old order, the old assumption count). So the success path
 * stores no history at all, and any earlier version can still be rebuilt.
 */
import { canonical } from "./diff.js";
import type { Plan, ReplanRecord, Step, StepRun } from "./schema.js";

export interface PlanVersionEntry {
  /** The version this entry leads to; applying it backwards gives `version - 1`. */
  version: number;
  /** Definitions, in version - 1, of steps that version `version` removed or changed. */
  replaced: Step[];
  /** Step order of version - 1. */
  order: string[];
  /** Number of assumptions in version - 1 (assumptions are only ever appended). */
  assumptionCount: number;
  rationale?: string;
  /** Step records as they stood at the end of version - 1, for the steps this replan reset or removed. */
  runs?: Record<string, StepRun>;
}

export function historyEntry(previous: Plan, next: Plan): PlanVersionEntry {
  const after = new Map(next.steps.map((s) => [s.id, s]));
  const entry: PlanVersionEntry = {
    version: next.version,
    replaced: previous.steps.filter((s) => {
      const now = after.get(s.id);
      return now === undefined || canonical(now) !== canonical(s);
    }),
    order: previous.steps.map((s) => s.id),
    assumptionCount: previous.assumptions.length,
  };
  if (previous.rationale !== undefined) entry.rationale = previous.rationale;
  return entry;
}

/** Rebuilds plan version `version` from the current plan and the history. */
export function planAtVersion(state: { plan?: Plan | undefined; planHistory: readonly PlanVersionEntry[] }, version: number): Plan | undefined {
  const current = state.plan;
  if (!current || version < 1 || version > current.version) return undefined;
  let plan: Plan = current;
  for (const entry of [...state.planHistory].reverse()) {
    if (entry.version <= version) break;
    const steps = new Map(plan.steps.map((s) => [s.id, s]));
    for (const old of entry.replaced) steps.set(old.id, old);
    plan = {
      version: entry.version - 1,
      steps: entry.order.map((id) => steps.get(id)).filter((s): s is Step => s !== undefined),
      assumptions: plan.assumptions.slice(0, entry.assumptionCount),
      ...(entry.rationale !== undefined ? { rationale: entry.rationale } : {}),
    };
  }
  return plan.version === version ? plan : undefined;
}

/**
 * Every step's record as it stood at the end of plan version `version`: the current records,
 * with the records each later replan reset put back, and steps first started after that version
 * ended shown as not yet run.
 */
export function runsAtVersion(
  state: { steps: Readonly<Record<string, StepRun>>; planHistory: readonly PlanVersionEntry[]; replans: readonly Pick<ReplanRecord, "fromVersion" | "at">[] },
  version: number,
): Record<string, StepRun> {
  const runs: Record<string, StepRun> = { ...state.steps };
  for (const entry of [...state.planHistory].reverse()) {
    if (entry.version <= version) break;
    Object.assign(runs, entry.runs ?? {});
  }
  const ended = state.replans.find((r) => r.fromVersion === version)?.at;
  if (ended !== undefined) {
    for (const [id, run] of Object.entries(runs)) {
      if (run.startedAt !== undefined && run.startedAt > ended) runs[id] = { status: "pending", attempts: 0 };
    }
  }
  return runs;
}

/** Records of earlier versions that a later replan reset: `{ version, stepId, run }`, oldest first. */
export function earlierRuns(planHistory: readonly PlanVersionEntry[]): { version: number; stepId: string; run: StepRun }[] {
  return planHistory.flatMap((entry) => Object.entries(entry.runs ?? {}).map(([stepId, run]) => ({ version: entry.version - 1, stepId, run })));
}
