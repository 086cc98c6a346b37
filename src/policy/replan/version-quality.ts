/**
 * The plan quality gate at a replanned version's door (docs/decisions/0040-plan-quality-gate.md,
 * docs/decisions/0056-replan-gathers-through-one-port.md): the deterministic findings of what the
 * version adds, the reviewer's findings the node gathered, and whether they hold the version. Pure:
 * the reviewer's answer and the time come in.
 */
import type { Plan } from "../../plan/schema/plan.js";
import { decide } from "../ladder/decide.js";
import type { Decision } from "../ladder/decision.js";
import type { ResolvedPolicy } from "../options.js";
import { qualityHold, qualityPolicy, type QualityFinding } from "../quality/findings.js";
import { qualityGate, type GateInput } from "../quality/gate.js";
import type { ProposedVersion } from "./replan.js";

/** What the gate checks of a replan's version: the steps and assumptions it adds, read against the whole version. */
export function versionAdds(
  before: { plan: Pick<Plan, "assumptions">; goal?: string | undefined },
  proposal: Pick<ProposedVersion, "plan" | "replacement">,
): GateInput {
  const known = new Set(before.plan.assumptions.map((a) => a.id));
  return {
    plan: proposal.plan,
    goal: before.goal ?? "",
    added: new Set(proposal.replacement),
    addedAssumptions: new Set(proposal.plan.assumptions.filter((a) => !known.has(a.id)).map((a) => a.id)),
  };
}

/** The `quality.hold` decision for a version the gate's findings hold (`qualityHold`), after `after` others. */
export function qualityHoldDecision(
  hold: NonNullable<ReturnType<typeof qualityHold>>,
  moment: { after: number; planVersion: number; at: string },
): Decision {
  return decide(hold.rule, { ...moment, attempt: 0, failureClass: "none", reason: hold.reason });
}

/** The hold of a version to commit, when its findings reach `policy.quality.hold`. */
export function versionHold(
  policy: Pick<ResolvedPolicy, "quality">,
  findings: readonly QualityFinding[],
  moment: { after: number; planVersion: number; at: string },
): Decision | undefined {
  const hold = qualityHold(findings, qualityPolicy(policy));
  return hold ? qualityHoldDecision(hold, moment) : undefined;
}

/** Whether the reviewer model is still to be asked about this version: the gate is on, one is configured, none asked. */
export function reviewPending(
  policy: Pick<ResolvedPolicy, "quality">,
  reviewer: boolean | undefined,
  reviewed: readonly QualityFinding[] | undefined,
): boolean {
  return reviewer === true && reviewed === undefined && qualityPolicy(policy) !== undefined;
}

/** The version's findings: the deterministic gate's, then the reviewer's. None when `policy.quality` is false. */
export function versionFindings(
  policy: Pick<ResolvedPolicy, "quality">,
  input: GateInput,
  reviewed: readonly QualityFinding[] = [],
): QualityFinding[] {
  const quality = qualityPolicy(policy);
  if (!quality) return [];
  return [...qualityGate(input, quality), ...reviewed];
}
