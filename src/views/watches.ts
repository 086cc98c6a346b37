/**
 * Assumption watchers as the views show them (docs/decisions/0041-evidence-freshness-and-drift.md): how many calls
 * found their assumption holding, drifted, or could not tell. Pure.
 */
import type { WatchRecord } from "../plan/schema/run.js";

/** The operator's one-line summary, e.g. "watches: 2 held, 1 drifted (price_ok before buy)"; empty when none ran. */
export function watchSummary(records: readonly WatchRecord[] | undefined): string[] {
  if (!records || records.length === 0) return [];
  const held = records.filter((r) => r.held === true).length;
  const drifted = records.filter((r) => r.held === false);
  const failed = records.length - held - drifted.length;
  const parts = [
    ...(held > 0 ? [`${held} held`] : []),
    ...(drifted.length > 0
      ? [`${drifted.length} drifted (${drifted.map((r) => `${r.assumptionId} before ${r.stepId}`).join(", ")})`]
      : []),
    ...(failed > 0 ? [`${failed} could not tell`] : []),
  ];
  return [`watches: ${parts.join(", ")}`];
}
