/**
 * The plan quality gate on the versions the model writes with `write_plan`
 * (docs/decisions/0040-plan-quality-gate.md, docs/decisions/0053-middleware-quality-freshness-watch.md):
 * the graph's pure checks, read the way the graph reads them — a first plan whole, a revision for the
 * steps and assumptions it adds. Findings at or above `policy.quality.hold` hold the version for a
 * person (`quality.hold`); a revision's held draft first goes back to the model with the findings
 * as issues, while `policy.replanDraftRetries` allows, as the replanner sends one back to its planner.
 */
import type { Plan } from "../plan/schema/plan.js";
import type { QualityFinding } from "../plan/schema/quality.js";
import { formatIssues } from "../plan/validate.js";
import { qualityHold, qualityPolicy } from "../policy/quality/findings.js";
import { qualityGate, qualityIssues, type GateInput } from "../policy/quality/gate.js";
import { sendBackDraft, type GuardHit } from "../policy/ladder/guards.js";
import type { CallEnv, ToolReply } from "./settle.js";
import type { AgentPlanUpdate } from "./agent-state.js";

export interface Gated {
  /** Every finding of the version (recorded in state `quality.findings`). */
  findings: QualityFinding[];
  /** The findings hold the version: the rule and reason a person is asked under. */
  hold?: GuardHit;
}

/** The version's findings, and whether they hold it. None when `policy.quality` is false. */
export function gateVersion(env: CallEnv, input: Omit<GateInput, "goal">): Gated {
  const quality = qualityPolicy(env.options.policy);
  const findings = qualityGate({ ...input, goal: env.state.goal }, quality);
  const held = qualityHold(findings, quality);
  return held ? { findings, hold: { rule: held.rule, reason: held.reason } } : { findings };
}

/** What a revision adds to the version: its new steps and the assumptions the old version did not have. */
export function revisionGate(old: Plan, next: Plan, added: readonly { id: string }[]): Omit<GateInput, "goal"> {
  const known = new Set(old.assumptions.map((a) => a.id));
  return {
    plan: next,
    added: new Set(added.map((s) => s.id)),
    addedAssumptions: new Set(next.assumptions.filter((a) => !known.has(a.id)).map((a) => a.id)),
  };
}

/**
 * A revision the gate would hold goes back to the model with the holding findings, while
 * `policy.replanDraftRetries` allows; undefined once the retries are spent (the version is held).
 */
export function sentBack(env: CallEnv, gated: Gated): ToolReply | undefined {
  const quality = qualityPolicy(env.options.policy);
  if (!gated.hold || !quality) return undefined;
  const issues = qualityIssues(gated.findings, quality);
  const returned = env.state.planRun.qualityReturns ?? 0;
  if (!sendBackDraft(issues, returned, env.options.policy)) return undefined;
  const content =
    `The plan was not recorded: the plan quality gate would hold it for a person.\n${formatIssues(issues)}\n` +
    "Fix it and call write_plan again.";
  return { content, status: "error", update: { planRun: { qualityReturns: returned + 1 } } };
}

/** The findings a recorded version writes to state, and the send-back count starting again. */
export function qualityWrite(findings: readonly QualityFinding[]): AgentPlanUpdate {
  return findings.length === 0 ? {} : { quality: { findings: [...findings] } };
}
