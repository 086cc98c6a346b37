/**
 * Every decision the middleware records is built here, from a rule of the table
 * (policy/ladder/rules.ts): a verdict of `classify`, a guard that fired, or a person's answer. One call
 * site per kind keeps them easy to move onto the executable rule table.
 */
import type { Action, FailureClass } from "../plan/schema/decision.js";
import type { Decision } from "../policy/ladder/decision.js";
import { decide as build } from "../policy/ladder/decide.js";
import type { RuleId } from "../policy/ladder/rules.js";

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

/**
 * A decision, built by the policy's one builder (policy/ladder/decide.ts); `seq` is assigned when it lands
 * in state (decisions of side-by-side calls are numbered there).
 */
export function decisionAt(verdict: DecisionVerdict, place: DecisionPlace): Decision {
  return build(verdict.rule, {
    ...verdict,
    after: -1,
    stepId: place.stepId,
    attempt: place.attempt,
    failureClass: verdict.failureClass ?? "none",
    planVersion: place.planVersion,
    at: place.at,
  });
}
