/**
 * A person's answers: which rule of the table (stage "person") each one is decided under, in the
 * graph's interrupts and in createAgent's loop alike. Nodes and the middleware apply the answer;
 * the rule it is recorded under is chosen here (docs/architecture.md, "The ladder"). Pure.
 */
import { PlanManagerError } from "../../errors.js";
import type { RuleIdOf } from "./rules.js";

const ANSWER_RULES = {
  /** Approved (or edited and approved) a plan at its review. */
  "approve-plan": "human.approve-plan",
  /** Rejected a whole plan at its review (createAgent): the author is asked for another. */
  "reject-plan": "human.reject-plan",
  /** Approved a replan a guard held. */
  "approve-replan": "human.approve-replan",
  /** Rejected a replan a guard held: the original trigger escalates. */
  "reject-replan": "human.reject-replan",
  /** Refused an escalated call (createAgent): the agent is asked to revise its plan. */
  "reject-call": "human.reject-call",
  retry: "human.retry",
  /** Skipped the step, or accepted a rolling-horizon plan's work as done. */
  skip: "human.skip",
  provide: "human.provide",
  replan: "human.replan",
  "change-scope": "human.change-scope",
  abort: "human.abort",
  /** Said that a side-effecting call whose outcome was unknown took effect. */
  "effect-happened": "human.effect-happened",
  /** Said that a side-effecting call whose outcome was unknown may go out once more under its key. */
  "effect-retry": "human.effect-retry",
  /** Did a human step. */
  complete: "human.complete",
} as const satisfies Record<string, RuleIdOf<"person">>;

export type PersonAnswer = keyof typeof ANSWER_RULES;

/** The rule a person's answer is recorded under. */
export function answerRule<A extends PersonAnswer>(answer: A): (typeof ANSWER_RULES)[A] {
  if (!Object.hasOwn(ANSWER_RULES, answer))
    throw new PlanManagerError("invalid_resume", `"${String(answer)}" is not an answer a person can give`);
  return ANSWER_RULES[answer];
}
