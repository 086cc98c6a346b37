/**
 * Every decision the middleware records is built here, from a rule of the table
 * (policy/rules.ts): a verdict of `classify`, a guard that fired, or a person's answer. One call
 * site per kind keeps them easy to move onto the executable rule table.
 */
import type { Action, FailureClass } from "../plan/schema.js";
import type { Decision } from "../policy/decision.js";
import { RULES, type RuleId } from "../policy/rules.js";

export interface DecisionVerdict {
  rule: RuleId;
  reason: string;
  /** Default: the rule's own action. */
  action?: Action;
  /** Default `"none"` (a guard or a person, not a failure). */
  failureClass?: FailureClass;
  delayMs?: number;
  brokenAssumption?: string;
  evidence?: string;
  by?: "person" | "llm";
}

export interface DecisionPlace {
  stepId?: string;
  attempt: number;
  planVersion: number;
  at: string;
}

/** A decision; `seq` is assigned when it lands in state (decisions of side-by-side calls are numbered there). */
export function decide(verdict: DecisionVerdict, place: DecisionPlace): Decision {
  const decision: Decision = {
    seq: 0,
    ...(place.stepId === undefined ? {} : { stepId: place.stepId }),
    attempt: place.attempt,
    failureClass: verdict.failureClass ?? "none",
    action: verdict.action ?? RULES[verdict.rule].action,
    rule: verdict.rule,
    reason: verdict.reason,
    planVersion: place.planVersion,
    at: place.at,
  };
  if (verdict.delayMs !== undefined) decision.delayMs = verdict.delayMs;
  if (verdict.brokenAssumption !== undefined) decision.brokenAssumption = verdict.brokenAssumption;
  if (verdict.evidence !== undefined) decision.evidence = verdict.evidence;
  if (verdict.by !== undefined) decision.by = verdict.by;
  return decision;
}
