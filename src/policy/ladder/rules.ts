/**
 * The response ladder, every rung and guard in one table (docs/architecture.md, "The ladder").
 * Each decision in `state.decisions` names one of these ids in `rule`; the evidence rule that
 * named the failure class is in `evidence-rules.ts`.
 *
 * Each rule states once the stage it belongs to, the failure classes it answers and the action
 * it takes; `decide` (decide.ts) builds every decision from it, and a test checks every decision
 * the suite emits against it. Reading down the table is reading the ladder in the order it is
 * checked: guards on the whole run, then for a failure retry → fallback → local replan → global
 * replan (each replan behind the replan guards) → skip if optional → escalate; then the LLM
 * classifier for what no rule recognised; then the guards the replanner applies while it
 * replans, the horizon's, the dispatcher's rate limits, and the answers people give.
 * Decision 0016 records why `when` is one line of prose and its predicate lives in the stage's
 * decider.
 */
import type { Action, FailureClass } from "../../plan/schema/decision.js";

/** Where in the run a rule is checked, in checking order. */
export const STAGES = [
  "run-guard",
  "retry",
  "fallback",
  "replan-local",
  "replan-global",
  "replan-guard",
  "skip",
  "escalate",
  "llm",
  "replanning",
  "horizon",
  "quality",
  "dispatch",
  "person",
] as const;
/** The stages of the rule table, in the order they are checked. */
export type Stage = (typeof STAGES)[number];

/** Every action a ladder rung can take (what a person or the LLM classifier may choose among). */
const LADDER: readonly Action[] = ["retry", "fallback", "replan_local", "replan_global", "skip", "escalate", "abort"];
const REPLAN: readonly Action[] = ["replan_local", "replan_global"];

/** A row of the rule table: its stage, the failure classes it answers, its action and when it fires. */
export interface Rule {
  stage: Stage;
  /** The failure classes a decision under this rule carries; "any" for guards and people. */
  answers: readonly FailureClass[] | "any";
  /** The action; a list when the rule's decider chooses among them (the LLM, a person, replan memory). */
  action: Action | readonly Action[];
  /** One line: when it fires. */
  when: string;
}

/** @deprecated use `Rule`. */
export type RuleSpec = Rule;

const r = <S extends Stage>(stage: S, answers: Rule["answers"], action: Rule["action"], when: string) => ({
  stage,
  answers,
  action,
  when,
});

/** Every rung and guard of the ladder, in the order they are checked. */
export const RULES = {
  // Run guards: checked first, for any deviation.
  "guard.max-decisions": r("run-guard", "any", "escalate", "policy.maxDecisions decisions were taken in this run"),
  "guard.committed-side-effect": r(
    "run-guard",
    ["deterministic"],
    "escalate",
    "a step that committed a side effect would run a changed operation",
  ),
  "guard.unplanned-side-effect": r(
    "run-guard",
    "any",
    "escalate",
    "inside createAgent, a side-effecting tool was called outside every plan step: not run; the agent must plan it",
  ),
  "guard.refused-calls": r(
    "run-guard",
    "any",
    "escalate",
    "inside createAgent, the model called a step that cannot run policy.maxRefusedCalls times: a person is asked",
  ),
  // A side-effecting call whose outcome is unknown, that no key or probe settles: never called again silently
  // (docs/decisions/0038-effect-journal.md).
  "effect.in-doubt": r(
    "run-guard",
    ["unknown"],
    "escalate",
    "a side-effecting call's outcome is unknown (cut by a crash or its deadline) and neither the tool's keys nor a verify probe settle it",
  ),
  // Retry: the same call may succeed later.
  "transient.retry": r(
    "retry",
    ["transient"],
    "retry",
    "a transient failure with attempts left is retried after backoff",
  ),
  "unmet.retry-once": r(
    "retry",
    ["success_signal_unmet"],
    "retry",
    "an unmet success signal on a step marked retryOnUnmet is retried once, if its retry.maxAttempts allows one more attempt",
  ),
  // Agent steps: a model that answered wrong is asked again, told why (docs/decisions/0021-agent-steps.md).
  "agent.retry-with-feedback": r(
    "retry",
    ["success_signal_unmet", "deterministic"],
    "retry",
    "an agent step's answer failed its check or validation: retry with the answer and why it failed",
  ),
  "route.escalate-tier": r(
    "retry",
    ["success_signal_unmet", "deterministic"],
    "retry",
    "a tiered agent step failed (not transiently): its next attempt runs one tier up, once per step",
  ),
  // Fallback: the step's alternative tool. Retries exhausted make a transient failure permanent.
  "deterministic.fallback": r(
    "fallback",
    ["deterministic"],
    "fallback",
    "a deterministic failure switches to the step's fallback tool",
  ),
  "exhausted.fallback": r(
    "fallback",
    ["deterministic"],
    "fallback",
    "retries ran out (the failure is now permanent): switch to the step's fallback tool",
  ),
  // Local replan: only the branch that rests on the broken assumption.
  "deterministic.replan-local": r(
    "replan-local",
    ["deterministic"],
    "replan_local",
    "no fallback, but the step rests on an assumption: replan that branch",
  ),
  "exhausted.replan-local": r(
    "replan-local",
    ["deterministic"],
    "replan_local",
    "retries and fallback ran out; the step rests on an assumption: replan that branch",
  ),
  "unmet.replan-local": r(
    "replan-local",
    ["success_signal_unmet"],
    "replan_local",
    "an unmet success signal is evidence against the step's first assumption",
  ),
  "assumption.replan-local": r(
    "replan-local",
    ["assumption_broken"],
    "replan_local",
    "one assumption is false: replan the steps that rest on it",
  ),
  "precondition.replan-producers": r(
    "replan-local",
    ["precondition_failed"],
    "replan_local",
    "a precondition is false: replan the steps that produce its facts",
  ),
  // Evidence freshness and assumption drift (docs/decisions/0041-evidence-freshness-and-drift.md).
  "evidence.stale": r(
    "replan-local",
    ["precondition_failed"],
    "refresh",
    "an input is older than the step's freshFor allows: the step that produced it runs again first (a bounded " +
      "backtrack: policy.maxBacktrackDepth, policy.maxBacktracksPerStep)",
  ),
  "assumption.drift": r(
    "replan-local",
    ["assumption_broken"],
    "replan_local",
    "an assumption's watcher saw it false before a step resting on it started: replan the steps that rest on it",
  ),
  // Global replan: everything not yet done.
  "assumption.several-global": r(
    "replan-global",
    ["assumption_broken"],
    "replan_global",
    "several assumptions are false at once: replan everything not done",
  ),
  "scope.replan-global": r(
    "replan-global",
    ["scope_changed"],
    "replan_global",
    "requirements changed: replan, keeping completed trusted work",
  ),
  "budget.replan-cheaper": r(
    "replan-global",
    ["budget_exhausted"],
    "replan_global",
    "a step, or before it starts the rest of a plan version, would exceed budget.maxCost: ask for a cheaper route",
  ),
  // Replan guards: checked in this order before a replan rung is taken; each escalates instead.
  "replan.unavailable": r(
    "replan-guard",
    "any",
    "escalate",
    "a replan rung fired but the planner has no replan function",
  ),
  "guard.max-replans": r(
    "replan-guard",
    "any",
    "escalate",
    "policy.maxReplans replans were attempted (failed ones count)",
  ),
  "guard.replan-budget": r("replan-guard", "any", "escalate", "budget.maxReplanCost is spent"),
  "guard.replan-cooldown": r(
    "replan-guard",
    "any",
    "escalate",
    "the same assumption was replanned and no step has succeeded since",
  ),
  // Skip: an optional step that would otherwise escalate.
  "optional.skip": r("skip", "any", "skip", "an optional step failed for good: skip it and its dependents"),
  // Escalate: no rung applies.
  "deterministic.escalate": r("escalate", ["deterministic"], "escalate", "no fallback and no assumption to revise"),
  "exhausted.escalate": r(
    "escalate",
    ["deterministic"],
    "escalate",
    "retries ran out, no fallback, no assumption to revise",
  ),
  "unmet.escalate": r(
    "escalate",
    ["success_signal_unmet"],
    "escalate",
    "an unmet success signal on a step that rests on no assumption",
  ),
  "assumption.unnamed": r("escalate", ["assumption_broken"], "escalate", "an assumption broke but none was named"),
  "precondition.escalate": r(
    "escalate",
    ["precondition_failed"],
    "escalate",
    "a precondition is false and no producer rests on an assumption",
  ),
  "evidence.stale-escalate": r(
    "escalate",
    ["precondition_failed"],
    "escalate",
    "an input is stale, and the step that produced it has side effects (running it again would repeat them) " +
      "or is no step of the plan (the run's input)",
  ),
  "unknown.escalate": r("escalate", ["unknown"], "escalate", "no evidence rule recognised the failure"),
  // The optional LLM classifier, consulted only for `unknown`: it chooses the class and the action.
  "llm.classifier": r(
    "llm",
    "any",
    LADDER,
    "the LLM classifier chose the action (any ladder action) for an unknown failure",
  ),
  // While replanning: memory, the planner's answer, and the guards on the proposed version.
  "replan.memory": r(
    "replanning",
    "any",
    REPLAN,
    "replan memory answered (reuse), hinted, or was passed over; the action is the replan's own",
  ),
  "replan.planner-error": r("replanning", "any", "escalate", "the planner threw while replanning"),
  "replan.invalid-draft": r(
    "replanning",
    "any",
    "escalate",
    "the planner's replacement steps failed validation, also after policy.replanDraftRetries re-asks with the issues",
  ),
  "guard.max-backtrack-depth": r(
    "replanning",
    "any",
    "escalate",
    "a local replan would re-run more than policy.maxBacktrackDepth completed steps",
  ),
  "guard.max-backtracks": r(
    "replanning",
    "any",
    "escalate",
    "a completed step was re-run policy.maxBacktracksPerStep times by backtracking",
  ),
  "guard.no-progress": r(
    "replanning",
    "any",
    "escalate",
    "the planner proposed the same steps again for the same assumption",
  ),
  "guard.new-capability": r(
    "replanning",
    "any",
    "escalate",
    "a new version adds a side-effecting tool or agent no earlier version used (policy.replanTools): plan review",
  ),
  "guard.untrusted-arguments": r(
    "replanning",
    "any",
    "escalate",
    "a side-effecting step of a new version is fed untrusted data (tool output, an error message, replan memory, " +
      "a step the version adds): plan review",
  ),
  "compensate.missing": r(
    "replanning",
    "any",
    "escalate",
    "a replan would abandon a committed side effect whose step has no compensate: asked before the version commits",
  ),
  // The rolling horizon: extending a plan that is not complete.
  "guard.max-extensions": r(
    "horizon",
    "any",
    "escalate",
    "a rolling-horizon plan was extended policy.maxExtensions times and is still not complete",
  ),
  // The plan quality gate, before the first step of every plan version (docs/decisions/0040-plan-quality-gate.md).
  "quality.hold": r(
    "quality",
    "any",
    "escalate",
    "a plan version's quality findings reach policy.quality.hold: it waits for a person at plan review",
  ),
  // Dispatch of steps running at once: not a rung, a record of a tool's concurrency changing.
  "rate.limit": r(
    "dispatch",
    ["transient", "none"],
    "retry",
    "a rate limit (429, retryAfterMs) halves the tool's concurrency (transient); each success adds one back (none)",
  ),
  // Not a rung: a record that a step's operation had committed already (docs/decisions/0006-idempotency-keys-name-the-operation.md).
  "effect.reused": r(
    "dispatch",
    ["none"],
    "reuse",
    "a step's operation equals a committed side effect: its committed output is reused and the tool is not called",
  ),
  // Not a rung: a record that a call whose outcome was unknown was settled by the step's verify probe.
  "effect.verified": r(
    "dispatch",
    ["none"],
    "reuse",
    "a side-effecting call's outcome was unknown; the step's verify probe says it happened: its output is recorded, the tool not called again",
  ),
  // Not a rung: a record that the verify probe says a call whose outcome was unknown did not happen.
  "effect.not-happened": r(
    "dispatch",
    ["none"],
    "retry",
    "a side-effecting call's outcome was unknown; the step's verify probe says it did not happen: it may go out again under the same key",
  ),
  // Not a rung: a record that a call whose outcome was unknown went out again under a key its tool honours.
  "effect.recalled": r(
    "dispatch",
    ["none"],
    "retry",
    "a side-effecting call's outcome was unknown and its tool honours idempotency keys: it was called again under the same key",
  ),
  // Not a rung: a record that an assumption's watcher answered what its check cannot read, so its drift went
  // undetected (docs/decisions/0041-evidence-freshness-and-drift.md).
  "assumption.watch-unreadable": r(
    "dispatch",
    ["unknown"],
    "proceed",
    "an assumption's watcher answered what its check cannot read (over the evidence size limit, a field it lacks): " +
      "drift is not detected and the step starts on the assumption as it stood; recorded once per run of such answers",
  ),
  // Compensation of abandoned side effects (docs/decisions/0039-compensation.md).
  "compensate.run": r(
    "dispatch",
    ["none"],
    "compensate",
    "a committed side effect was abandoned (a replan dropped its step, or the run ended): its compensation ran",
  ),
  "compensate.failed": r(
    "dispatch",
    "any",
    "escalate",
    "a compensation still failed when its step's retry policy ran out: a person is asked",
  ),
  // Answers a person gives at an interrupt (decisions with by: "person"); the class is the one answered.
  "human.deadline-passed": r(
    "person",
    ["budget_exhausted"],
    "escalate",
    "a human step was answered after its timeoutMs",
  ),
  "human.retry": r("person", "any", "retry", "a person asked for a fresh round of attempts"),
  "human.skip": r("person", "any", "skip", "a person skipped the step"),
  "human.provide": r("person", "any", "provide", "a person supplied the step's facts; no tool ran"),
  "human.replan": r("person", "any", "replan_global", "a person asked for a replan with a constraint"),
  "human.change-scope": r("person", "any", "replan_global", "a person changed the scope"),
  "human.approve-replan": r(
    "person",
    "any",
    REPLAN,
    "a person approved a held replan; it is applied as proposed (local or global)",
  ),
  "human.reject-replan": r(
    "person",
    "any",
    "escalate",
    "a person rejected a held replan: it is discarded and the original trigger escalates",
  ),
  "human.abort": r("person", "any", "abort", "a person aborted the run"),
  "human.effect-happened": r(
    "person",
    "any",
    "provide",
    "a person said a call whose outcome was unknown took effect, and gave its output: recorded as committed",
  ),
  "human.effect-retry": r(
    "person",
    "any",
    "retry",
    "a person said a call whose outcome was unknown may go out once more under its key",
  ),
  "human.approve-plan": r(
    "person",
    "any",
    "approve",
    "a person approved (or edited and approved) the plan at its review; its first step starts",
  ),
  "human.complete": r("person", "any", "complete", "a person did a human step; their output became its facts"),
  // Answers inside createAgent's loop (langgraph-replan/agent).
  "human.reject-plan": r(
    "person",
    "any",
    "escalate",
    "a person rejected a whole plan at review: it is not adopted and the author is asked for another",
  ),
  "human.reject-call": r(
    "person",
    "any",
    "escalate",
    "a person refused an escalated call: it does not run, and the agent is asked to revise its plan",
  ),
} as const satisfies Record<string, Rule>;

/** The id of a rule of the table (`transient.retry`, `guard.max-replans`, …). */
export type RuleId = keyof typeof RULES;

/** Every rule id, in table order. */
export const RULE_IDS = Object.keys(RULES) as [RuleId, ...RuleId[]];

/** Whether `id` names a rule of the table. */
export function isRuleId(id: string): id is RuleId {
  return Object.hasOwn(RULES, id);
}

/** The ids of one stage's rules. */
export type RuleIdOf<S extends Stage> = { [K in RuleId]: (typeof RULES)[K]["stage"] extends S ? K : never }[RuleId];

/** A stage's rules in the table's order: the order they are checked in. */
export function rulesOf<S extends Stage>(stage: S): RuleIdOf<S>[] {
  return RULE_IDS.filter((id): id is RuleIdOf<S> => RULES[id].stage === stage);
}

/** The actions a rule allows: one, or the list its decider chooses among. */
export function actionsOf(rule: RuleId): readonly Action[] {
  const declared: Rule["action"] = RULES[rule].action;
  return typeof declared === "string" ? [declared] : declared;
}

/** Whether a decision's class and action are those its rule declares (empty when they are). */
export function disagreement(d: { rule: string; failureClass: FailureClass; action: Action }): string | undefined {
  if (!isRuleId(d.rule)) return `${d.rule}: not a rule of the table`;
  const rule: Rule = RULES[d.rule];
  if (rule.answers !== "any" && !rule.answers.includes(d.failureClass))
    return `${d.rule}: class ${d.failureClass}, the table says ${rule.answers.join(" | ")}`;
  if (!actionsOf(d.rule).includes(d.action))
    return `${d.rule}: action ${d.action}, the table says ${actionsOf(d.rule).join(" | ")}`;
  return undefined;
}
