/**
 * The one place a `Decision` is built: from a rule of the table (rules.ts), which states its
 * action, and the facts of the moment. `seq` follows the decisions already taken.
 */
import { PlanManagerError } from "../../errors.js";
import type { Action, FailureClass } from "../../plan/schema/decision.js";
import type { Decision } from "./decision.js";
import { actionsOf, type RuleId } from "./rules.js";

/** What a decision records beside its rule. */
export interface DecisionInput {
  /** How many decisions precede this one (in state, and earlier in the same update). */
  after: number;
  stepId?: string | undefined;
  attempt: number;
  failureClass: FailureClass;
  reason: string;
  planVersion: number;
  at: string;
  /** Only for a rule that lists several actions (the LLM classifier, a person, replan memory). */
  action?: Action | undefined;
  delayMs?: number | undefined;
  brokenAssumption?: string | undefined;
  evidence?: string | undefined;
  by?: "llm" | "person" | undefined;
}

/** A decision under `rule`; throws `invalid_options` when the action is not one the rule takes. */
export function decide(rule: RuleId, input: DecisionInput): Decision {
  const allowed = actionsOf(rule);
  const action = input.action ?? (allowed.length === 1 ? allowed[0] : undefined);
  if (action === undefined || !allowed.includes(action)) {
    throw new PlanManagerError(
      "invalid_options",
      `rule ${rule} takes ${allowed.join(" or ")}, not ${action ?? "no action"}: pick one of the rule's actions`,
    );
  }
  const { stepId, delayMs, brokenAssumption, evidence, by } = input;
  return {
    seq: input.after + 1,
    ...(stepId !== undefined ? { stepId } : {}),
    attempt: input.attempt,
    failureClass: input.failureClass,
    action,
    rule,
    ...(evidence !== undefined ? { evidence } : {}),
    reason: input.reason,
    planVersion: input.planVersion,
    at: input.at,
    ...(delayMs !== undefined ? { delayMs } : {}),
    ...(brokenAssumption !== undefined ? { brokenAssumption } : {}),
    ...(by !== undefined ? { by } : {}),
  };
}
