/**
 * What the plan quality gate reports (docs/decisions/0040-plan-quality-gate.md): findings as data,
 * each naming its rule, its severity and what it is about; the gate's options with their
 * defaults; and whether a version's findings hold it for a person. Pure.
 */
import type { ResolvedPolicy } from "../options.js";
import type { QualityFinding, Severity } from "../../plan/schema/quality.js";

export {
  QualityFindingSchema,
  QualityStateSchema,
  SeveritySchema,
  type QualityFinding,
  type QualityState,
  type Severity,
} from "../../plan/schema/quality.js";

/** The gate's rules. A finding is not a decision: these ids are not rows of the ladder's table. */
export const QUALITY_RULES = {
  /** A side-effecting step without `successSignal`, a produced fact nothing uses, a step that cannot fail loudly. */
  structure: "quality.structure",
  /** An estimate's bounds missing, unordered, not positive where a ratio is taken, or wider than `maxSpan`. */
  estimateBounds: "quality.estimate-bounds",
  /** An estimate of low confidence with no evidence. */
  estimateEvidence: "quality.estimate-evidence",
  /** A finding of the optional reviewer model. */
  reviewer: "quality.reviewer",
  /** The reviewer threw, timed out or answered something that is not findings: the plan went unreviewed. */
  reviewerFailed: "quality.reviewer-failed",
} as const;

export type QualityRule = (typeof QUALITY_RULES)[keyof typeof QUALITY_RULES];

const RANK: Record<Severity, number> = { low: 1, medium: 2, high: 3 };

/** The gate's options resolved: `undefined` when `policy.quality` is `false` (the gate is off). */
export interface QualityPolicy {
  hold: Severity | "never";
  maxSpan: number;
}

export const DEFAULT_QUALITY: Readonly<QualityPolicy> = Object.freeze({ hold: "high", maxSpan: 100 });

export function qualityPolicy(policy: Pick<ResolvedPolicy, "quality">): QualityPolicy | undefined {
  if (policy.quality === false) return undefined;
  return { ...DEFAULT_QUALITY, ...policy.quality };
}

/** The findings that hold a version: at or above `hold`. */
export function holdingFindings(findings: readonly QualityFinding[], quality: QualityPolicy): QualityFinding[] {
  if (quality.hold === "never") return [];
  const bar = RANK[quality.hold];
  return findings.filter((f) => RANK[f.severity] >= bar);
}

/** The rule and reason a version is held under, when some finding holds it. */
export function qualityHold(
  findings: readonly QualityFinding[],
  quality: QualityPolicy | undefined,
): { rule: "quality.hold"; reason: string; findings: QualityFinding[] } | undefined {
  if (!quality) return undefined;
  const holding = holdingFindings(findings, quality);
  if (holding.length === 0) return undefined;
  const rules = [...new Set(holding.map((f) => f.rule))].join(", ");
  const plural = holding.length === 1 ? "finding" : "findings";
  return {
    rule: "quality.hold",
    reason: `the plan quality gate holds the plan: ${holding.length} ${plural} at or above ${quality.hold} (${rules})`,
    findings: holding,
  };
}
