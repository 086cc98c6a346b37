/**
 * The response ladder, every rung and guard in one table (DESIGN §2). Each decision in
 * `state.decisions` names one of these ids in `rule`; the evidence rule that named the failure
 * class is in `evidence-rules.ts`.
 *
 * `answers` is the failure class (or the trigger) the rule responds to; `action` is what it does.
 * Reading down the table is reading the ladder: retry → fallback → local replan → global replan →
 * escalate, with the guards that stop a rung and the answers people give at an interrupt.
 */
import type { Action, FailureClass } from "../plan/schema.js";

export interface RuleSpec {
  /** The failure class or trigger the rule responds to. */
  answers: FailureClass | "any" | "person" | "llm";
  action: Action;
  /** One line: when it fires. */
  description: string;
}

export const RULES = {
  // Retry: the same call may succeed later.
  "transient.retry": {
    answers: "transient",
    action: "retry",
    description: "a transient failure with attempts left is retried after backoff",
  },
  "unmet.retry-once": {
    answers: "success_signal_unmet",
    action: "retry",
    description: "an unmet success signal on a step marked retryOnUnmet is retried once",
  },
  // Fallback: the step's alternative tool.
  "deterministic.fallback": {
    answers: "deterministic",
    action: "fallback",
    description: "a deterministic failure switches to the step's fallback tool",
  },
  "exhausted.fallback": {
    answers: "transient",
    action: "fallback",
    description: "retries ran out: switch to the step's fallback tool",
  },
  // Local replan: only the branch that rests on the broken assumption.
  "deterministic.replan-local": {
    answers: "deterministic",
    action: "replan_local",
    description: "no fallback, but the step rests on an assumption: replan that branch",
  },
  "exhausted.replan-local": {
    answers: "transient",
    action: "replan_local",
    description: "retries and fallback ran out; the step rests on an assumption: replan that branch",
  },
  "unmet.replan-local": {
    answers: "success_signal_unmet",
    action: "replan_local",
    description: "an unmet success signal is evidence against the step's first assumption",
  },
  "assumption.replan-local": {
    answers: "assumption_broken",
    action: "replan_local",
    description: "one assumption is false: replan the steps that rest on it",
  },
  "precondition.replan-producers": {
    answers: "precondition_failed",
    action: "replan_local",
    description: "a precondition is false: replan the steps that produce its facts",
  },
  // Global replan: everything not yet done.
  "assumption.several-global": {
    answers: "assumption_broken",
    action: "replan_global",
    description: "several assumptions are false at once: replan everything not done",
  },
  "scope.replan-global": {
    answers: "scope_changed",
    action: "replan_global",
    description: "requirements changed: replan, keeping completed trusted work",
  },
  "budget.replan-cheaper": {
    answers: "budget_exhausted",
    action: "replan_global",
    description: "a step would exceed budget.maxCost: ask for a cheaper route",
  },
  // Skip: an optional step that would otherwise escalate.
  "optional.skip": {
    answers: "any",
    action: "skip",
    description: "an optional step failed for good: skip it and its dependents",
  },
  // Escalate: no rung applies.
  "deterministic.escalate": {
    answers: "deterministic",
    action: "escalate",
    description: "no fallback and no assumption to revise",
  },
  "exhausted.escalate": {
    answers: "transient",
    action: "escalate",
    description: "retries ran out, no fallback, no assumption to revise",
  },
  "unmet.escalate": {
    answers: "success_signal_unmet",
    action: "escalate",
    description: "an unmet success signal on a step that rests on no assumption",
  },
  "assumption.unnamed": {
    answers: "assumption_broken",
    action: "escalate",
    description: "an assumption broke but none was named",
  },
  "precondition.escalate": {
    answers: "precondition_failed",
    action: "escalate",
    description: "a precondition is false and no producer rests on an assumption",
  },
  "unknown.escalate": {
    answers: "unknown",
    action: "escalate",
    description: "no evidence rule recognised the failure",
  },
  // Guards: each stops a rung and escalates (or skips an optional step).
  "guard.max-decisions": {
    answers: "any",
    action: "escalate",
    description: "policy.maxDecisions decisions were taken in this run",
  },
  "guard.max-replans": {
    answers: "any",
    action: "escalate",
    description: "policy.maxReplans replans were attempted (failed ones count)",
  },
  "guard.replan-budget": { answers: "any", action: "escalate", description: "budget.maxReplanCost is spent" },
  "guard.replan-cooldown": {
    answers: "any",
    action: "escalate",
    description: "the same assumption was replanned and no step has succeeded since",
  },
  "guard.max-backtrack-depth": {
    answers: "any",
    action: "escalate",
    description: "a local replan would re-run more than policy.maxBacktrackDepth completed steps",
  },
  "guard.max-backtracks": {
    answers: "any",
    action: "escalate",
    description: "a completed step was re-run policy.maxBacktracksPerStep times by backtracking",
  },
  "guard.no-progress": {
    answers: "any",
    action: "escalate",
    description: "the planner proposed the same steps again for the same assumption",
  },
  "guard.committed-side-effect": {
    answers: "deterministic",
    action: "escalate",
    description: "a step that committed a side effect would run a changed operation",
  },
  "guard.new-capability": {
    answers: "any",
    action: "escalate",
    description: "a replan adds a side-effecting tool no earlier plan version used (policy.replanTools): plan review",
  },
  "guard.untrusted-arguments": {
    answers: "any",
    action: "escalate",
    description: "a side-effecting step a replan adds reads data produced after the original plan: plan review",
  },
  "replan.unavailable": {
    answers: "any",
    action: "escalate",
    description: "a replan rung fired but the planner has no replan function",
  },
  "replan.planner-error": { answers: "any", action: "escalate", description: "the planner threw while replanning" },
  "replan.invalid-draft": {
    answers: "any",
    action: "escalate",
    description: "the planner's replacement steps failed validation",
  },
  "guard.max-extensions": {
    answers: "any",
    action: "escalate",
    description: "a rolling-horizon plan was extended policy.maxExtensions times and is still not complete",
  },
  "replan.memory": {
    answers: "any",
    action: "replan_local",
    description: "replan memory answered (reuse), hinted, or was passed over; the action is the replan's own",
  },
  "human.deadline-passed": {
    answers: "budget_exhausted",
    action: "escalate",
    description: "a human step was answered after its timeoutMs",
  },
  // Dispatch of steps running at once (DESIGN §7.1): not a rung, a record of a tool's concurrency changing.
  "rate.limit": {
    answers: "transient",
    action: "retry",
    description: "a rate limit (429, retryAfterMs) halves the tool's concurrency; each success adds one back",
  },
  // Answers a person gives at an interrupt (decisions with by: "person").
  "human.retry": { answers: "person", action: "retry", description: "a person asked for a fresh round of attempts" },
  "human.skip": { answers: "person", action: "skip", description: "a person skipped the step" },
  "human.provide": {
    answers: "person",
    action: "provide",
    description: "a person supplied the step's facts; no tool ran",
  },
  "human.replan": {
    answers: "person",
    action: "replan_global",
    description: "a person asked for a replan with a constraint",
  },
  "human.change-scope": { answers: "person", action: "replan_global", description: "a person changed the scope" },
  "human.approve-replan": {
    answers: "person",
    action: "replan_global",
    description: "a person approved a replan the capability guard held; it is applied as proposed (local or global)",
  },
  "human.reject-replan": {
    answers: "person",
    action: "escalate",
    description: "a person rejected a held replan: it is discarded and the original trigger escalates",
  },
  "human.approve-plan": {
    answers: "person",
    action: "replan_global",
    description: "a person approved (or edited and approved) a whole plan at review; it is adopted as the plan",
  },
  "human.reject-plan": {
    answers: "person",
    action: "escalate",
    description: "a person rejected a whole plan at review: it is not adopted and the author is asked for another",
  },
  "human.reject-call": {
    answers: "person",
    action: "escalate",
    description: "a person refused an escalated call: it does not run, and the agent is asked to revise its plan",
  },
  "human.abort": { answers: "person", action: "abort", description: "a person aborted the run" },
  // The optional LLM classifier, consulted only for `unknown`.
  "llm.classifier": {
    answers: "llm",
    action: "escalate",
    description: "the LLM classifier chose the action (any ladder action) for an unknown failure",
  },
} as const satisfies Record<string, RuleSpec>;

export type RuleId = keyof typeof RULES;

export const RULE_IDS = Object.keys(RULES) as [RuleId, ...RuleId[]];

export function isRuleId(id: string): id is RuleId {
  return Object.hasOwn(RULES, id);
}
