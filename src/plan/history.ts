/**
 * Plan versions as a compact history: each entry stores only what changed from the previous
 * version, so old versions stay readable without a copy of the plan per version.
 */
import type { Assumption, Plan, Step } from "./schema.js";

export interface PlanVersionEntry {
  version: number;
  /** Steps added or replaced in this version (full definitions). */
  upserted: Step[];
  /** Ids of steps removed in this version. */
  removed: string[];
  /** Assumptions added in this version. */
  assumptions: Assumption[];
  /** Step order of this version (ids only). */
  order: string[];
  rationale?: string;
}

export function historyEntry(previous: Plan | undefined, next: Plan): PlanVersionEntry {
  const before = new Map((previous?.steps ?? []).map((s) => [s.id, s]));
  const nextIds = new Set(next.steps.map((s) => s.id));
  const knownAssumptions = new Set((previous?.assumptions ?? []).map((a) => a.id));
  const entry: PlanVersionEntry = {
    version: next.version,
    upserted: next.steps.filter((s) => before.get(s.id) === undefined || JSON.stringify(before.get(s.id)) !== JSON.stringify(s)),
    removed: [...before.keys()].filter((id) => !nextIds.has(id)),
    assumptions: next.assumptions.filter((a) => !knownAssumptions.has(a.id)),
    order: next.steps.map((s) => s.id),
  };
  if (next.rationale !== undefined) entry.rationale = next.rationale;
  return entry;
}

/** Rebuilds plan version `version` from the history. */
export function planAtVersion(history: readonly PlanVersionEntry[], version: number): Plan | undefined {
  const steps = new Map<string, Step>();
  const assumptions: Assumption[] = [];
  let found: PlanVersionEntry | undefined;
  for (const entry of history) {
    if (entry.version > version) break;
    for (const id of entry.removed) steps.delete(id);
    for (const step of entry.upserted) steps.set(step.id, step);
    assumptions.push(...entry.assumptions);
    found = entry;
  }
  if (!found) return undefined;
  const plan: Plan = {
    version: found.version,
    steps: found.order.map((id) => steps.get(id)).filter((s): s is Step => s !== undefined),
    assumptions,
  };
  if (found.rationale !== undefined) plan.rationale = found.rationale;
  return plan;
}
