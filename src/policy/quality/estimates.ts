/**
 * The Fermi check on numeric assumptions (docs/decisions/0040-plan-quality-gate.md): an estimate's
 * bounds present, ordered and within `maxSpan` of each other; a low-confidence estimate backed by
 * evidence. Pure; reads only the assumptions it is given.
 */
import type { Assumption, Estimate } from "../../plan/schema/plan.js";
import { QUALITY_RULES, type QualityFinding, type QualityPolicy } from "./findings.js";

/** `high / low` for a range on one side of zero; `undefined` for a range that contains zero (no bounded ratio). */
export function estimateSpan(low: number, high: number): number | undefined {
  if (low === high) return 1;
  if (low > 0) return high / low;
  if (high < 0) return low / high;
  return undefined;
}

/** What is wrong with an estimate's bounds, or nothing. */
function boundsProblem(e: Estimate, maxSpan: number): string | undefined {
  const { low, high } = e;
  if (low === undefined && high === undefined) return "has no bounds (give low and high)";
  if (low === undefined) return "has no low bound";
  if (high === undefined) return "has no high bound";
  // The schema refuses NaN and Infinity; an estimate built in code past the schema is refused here too.
  if (!Number.isFinite(low) || !Number.isFinite(high)) return "has a bound that is not a finite number";
  if (low > high) return `has its bounds out of order (low ${low} > high ${high})`;
  const span = estimateSpan(low, high);
  if (span === undefined)
    return `spans zero (${low} to ${high}): its ratio is unbounded; give a range on one side of zero`;
  if (span > maxSpan) return `is ${formatSpan(span)}× wide (${low} to ${high}), over policy.quality.maxSpan ${maxSpan}`;
  return undefined;
}

function formatSpan(span: number): string {
  return Number.isInteger(span) ? String(span) : span.toPrecision(3);
}

/** Findings of the estimates of `assumptions`. */
export function estimateFindings(assumptions: readonly Assumption[], quality: QualityPolicy): QualityFinding[] {
  const findings: QualityFinding[] = [];
  for (const a of assumptions) {
    const e = a.estimate;
    if (e === undefined) continue;
    const unit = e.unit !== undefined ? ` (${e.unit})` : "";
    const problem = boundsProblem(e, quality.maxSpan);
    if (problem !== undefined)
      findings.push({
        rule: QUALITY_RULES.estimateBounds,
        severity: "high",
        assumptionId: a.id,
        message: `the estimate of assumption "${a.id}"${unit} ${problem}`,
      });
    if (e.confidence === "low" && (e.evidence ?? []).length === 0)
      findings.push({
        rule: QUALITY_RULES.estimateEvidence,
        severity: "medium",
        assumptionId: a.id,
        message: `the estimate of assumption "${a.id}"${unit} is of low confidence and names no evidence (fact keys)`,
      });
  }
  return findings;
}
