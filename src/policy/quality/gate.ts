/**
 * The plan quality gate's deterministic part (docs/decisions/0040-plan-quality-gate.md): before the
 * first step of a plan version, the estimates of the assumptions it adds and the structure of the
 * steps it adds, read against the whole version. A replan or an extension is checked for what it
 * adds: what it kept was checked with the version that brought it. Pure.
 */
import type { Plan } from "../../plan/schema/plan.js";
import type { PlanIssue } from "../../plan/issues.js";
import { estimateFindings } from "./estimates.js";
import { holdingFindings, type QualityFinding, type QualityPolicy } from "./findings.js";
import { structureFindings } from "./structure.js";

/** Findings kept per version at most: a hostile plan cannot flood state or a review. High severities come first. */
export const MAX_FINDINGS = 50;

export interface GateInput {
  /** The version to check. */
  plan: Plan;
  goal: string;
  /** Ids of the steps the version adds; every step when not given (the first plan). */
  added?: ReadonlySet<string>;
  /** Ids of the assumptions the version adds; every assumption when not given. */
  addedAssumptions?: ReadonlySet<string>;
}

/** The deterministic findings of a version, each naming the version; none when the gate is off. */
export function qualityGate(input: GateInput, quality: QualityPolicy | undefined): QualityFinding[] {
  if (!quality) return [];
  const { plan, added, addedAssumptions } = input;
  const assumptions =
    addedAssumptions === undefined ? plan.assumptions : plan.assumptions.filter((a) => addedAssumptions.has(a.id));
  const found = [...estimateFindings(assumptions, quality), ...structureFindings(plan, input.goal, added)];
  return capped(found).map((f) => ({ ...f, planVersion: plan.version }));
}

/** At most `MAX_FINDINGS`, the most severe kept. */
export function capped(findings: readonly QualityFinding[]): QualityFinding[] {
  if (findings.length <= MAX_FINDINGS) return [...findings];
  const order = { high: 0, medium: 1, low: 2 } as const;
  return [...findings].sort((a, b) => order[a.severity] - order[b.severity]).slice(0, MAX_FINDINGS);
}

/**
 * The findings that would hold a replan draft, as typed issues the planner is sent back with
 * (`ReplanRequest.issues`, code `quality`), like any other issue of its draft.
 */
export function qualityIssues(findings: readonly QualityFinding[], quality: QualityPolicy | undefined): PlanIssue[] {
  if (!quality) return [];
  return holdingFindings(findings, quality).map((f) => ({
    code: "quality",
    path: f.assumptionId !== undefined ? ["assumptions", f.assumptionId, "estimate"] : ["steps", f.stepId ?? ""],
    ...(f.stepId !== undefined ? { stepId: f.stepId } : {}),
    message: `${f.rule} (${f.severity}): ${f.message}`,
  }));
}
