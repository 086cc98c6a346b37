/**
 * Compensations as the views show them (docs/decisions/0039-compensation.md): how many
 * abandoned effects were undone, failed, wait, or were left standing by a person. Pure.
 */
import type { CompensationRecord, CompensationStatus } from "../plan/schema/run.js";

export type CompensationCounts = Record<CompensationStatus, number>;

/** Counts per status; undefined for a run that abandoned no effect. */
export function compensationCounts(records: readonly CompensationRecord[] | undefined): CompensationCounts | undefined {
  if (!records || records.length === 0) return undefined;
  const counts: CompensationCounts = { done: 0, failed: 0, pending: 0, waived: 0 };
  for (const r of records) counts[r.status]++;
  return counts;
}

/** One line per compensation: the step, its effect's key, the undo's key and tool, where it stands. */
export function compensationLines(records: readonly CompensationRecord[] | undefined): string[] {
  return (records ?? []).map(
    (r) =>
      `${r.stepId}: ${r.status}${r.tool ? ` (${r.tool}, ${r.attempts ?? 0} attempt(s))` : ""} ` +
      `${r.idempotencyKey} → ${r.compensationKey}${r.error ? `: ${r.error.name}: ${r.error.message}` : ""}`,
  );
}

/** The operator's one-line summary, e.g. "compensations: 2 done, 1 failed"; empty when there are none. */
export function compensationSummary(counts: CompensationCounts | undefined): string[] {
  if (!counts) return [];
  const parts = (Object.entries(counts) as [CompensationStatus, number][])
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${n} ${status}`);
  return [`compensations: ${parts.join(", ")}`];
}
