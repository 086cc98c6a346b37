/**
 * The response ladder as a pure function: (deviation, step, standing, policy) → decision.
 * No LangGraph, no clock, no I/O: the same input always gives the same decision.
 *
 * Ladder: retry → fallback → local replan → global replan → escalate (→ abort by a person).
 * Each decision carries the id of the action rule that chose it (`rule`) and of the evidence
 * rule that named the failure class (`evidence`).
 */
import type { Action, FailureClass } from "../../plan/schema/decision.js";
import type { Decision } from "./decision.js";
import type { StepRun } from "../../plan/schema/run.js";
import type { ModelTier, Step } from "../../plan/schema/step.js";
import { agentRoute } from "./agent-routing.js";
import { backoffDelay } from "../../plan/retry.js";
import { namedAssumption, type Deviation } from "./deviation.js";
import { classifyEvidence } from "./evidence-rules.js";
import type { ResolvedPolicy } from "../options.js";
import { plannerUnavailable } from "./guards.js";
import { effectiveRetry } from "../../plan/retry.js";
import { actionsOf, rulesOf, type RuleId, type RuleIdOf } from "./rules.js";
import { LADDER_ACTIONS } from "./records.js";
import { inDoubtVerdict } from "./in-doubt.js";

/** Where the run stands with respect to replanning guardrails. */
export interface ReplanStanding {
  /** The planner can produce replacement steps (it has `replan`). */
  available: boolean;
  /** Replans attempted so far, failed ones included. */
  count: number;
  /** Planning cost spent on replans so far. */
  spent: number;
  /** Assumptions whose last replan has not yet been followed by `replanCooldownSteps` successes. */
  coolingDown: readonly string[];
  /** Assumptions already falsified. */
  falsified: readonly string[];
}

/** What the classifier reads: the deviation, its step, the run so far and the policy. */
export interface ClassifyInput {
  deviation: Deviation;
  step?: Step;
  run?: StepRun;
  policy: ResolvedPolicy;
  replan: ReplanStanding;
  /** Decisions already taken in this run. */
  decisionCount: number;
  /** For a precondition: the assumptions of the steps that produce the facts it needs. */
  producerAssumptions?: readonly string[];
  /** The model tiers `createPlanManager({ models })` configures (agent steps move up through them). */
  tiers?: readonly ModelTier[];
  /** For stale evidence: the answer `staleAnswer` (stale.ts) gives where the run stands on backtracking. */
  stale?: { rule: RuleId; reason: string };
  /**
   * The step's unmet success signal was retried once already in this round (`retriedOnUnmet`): `retryOnUnmet`
   * counts unmet results, not attempts. Left out, the step's attempts in the round stand in for it.
   */
  unmetRetried?: boolean;
}

/** The classifier's answer: the failure class, the action, and the rule that fired. */
export interface Verdict {
  failureClass: FailureClass;
  action: Action;
  rule: RuleId;
  evidence: string;
  reason: string;
  delayMs?: number;
  brokenAssumption?: string;
  /** Set when the LLM classifier, not a rule, chose the action. */
  by?: "llm";
  /** The tier an agent step's next attempt runs on (rule `route.escalate-tier`). */
  tier?: ModelTier;
}

/**
 * Classifies a deviation and picks the least disruptive rung that can fix it, reading the rule table top to
 * bottom. Pure.
 */
export function classify(input: ClassifyInput): Verdict {
  const { deviation, policy } = input;
  const agentAnswer = input.step?.agent !== undefined && input.run?.usedFallback !== true;
  const evidence = classifyEvidence(deviation, { agentAnswer });
  const base = { evidence: evidence.id };
  const what = deviation.message;
  if (input.decisionCount >= policy.maxDecisions) {
    const limit = `${policy.maxDecisions} decisions taken in this run (policy.maxDecisions)`;
    return verdict("guard.max-decisions", evidence.failureClass, `${limit}; a person must look: ${what}`, base);
  }
  if (deviation.kind === "side_effect_changed") {
    const guard = { evidence: "sideeffect.operation-changed" };
    return escalateOrSkip(
      input,
      guard,
      "deterministic",
      "guard.committed-side-effect",
      `${what}; a person must decide`,
    );
  }
  if (deviation.kind === "effect_in_doubt") return inDoubtVerdict(deviation);
  const { step, run } = input;
  const routed = agentRoute({
    deviation,
    step,
    run,
    policy,
    failureClass: evidence.failureClass,
    tiers: input.tiers ?? [],
  });
  if (routed) {
    const { rule, reason, tier } = routed;
    return { ...verdict(rule, evidence.failureClass, reason, { ...base, delayMs: 0 }), ...(tier ? { tier } : {}) };
  }
  return RUNGS_BY_CLASS[evidence.failureClass](input, base, what);
}

/**
 * Whether the step's unmet success signal was retried once already in its current round: an `unmet.retry-once`
 * decision for it in this plan version since a person last gave it a fresh round (a person's retry). A transient
 * failure retried before the unmet result does not spend the retry (docs/guides/configuration.md: "retry once on an
 * unmet success signal").
 */
export function retriedOnUnmet(
  decisions: readonly Pick<Decision, "rule" | "stepId" | "by" | "action" | "planVersion">[],
  stepId: string,
  planVersion: number,
): boolean {
  for (let i = decisions.length - 1; i >= 0; i--) {
    const d = decisions[i]!;
    if (d.stepId !== stepId || d.planVersion !== planVersion) continue;
    if (d.rule === "unmet.retry-once") return true;
    if (d.by === "person" && d.action === "retry") return false;
  }
  return false;
}

type Rungs = (input: ClassifyInput, base: { evidence: string }, what: string) => Verdict;

/** Each failure class's rungs, read top to bottom in the order of the rule table (rules.ts). */
const RUNGS_BY_CLASS: Record<FailureClass, Rungs> = {
  transient: (input, base, what) => {
    const { deviation, step, run, policy } = input;
    const retry = effectiveRetry(step, policy);
    const used = (run?.attempts ?? deviation.attempt) - (run?.retryBase ?? 0);
    if (used >= retry.maxAttempts) {
      const reason = `retries exhausted after ${used}/${retry.maxAttempts} attempts (${what})`;
      return afterPermanentFailure(input, base, "deterministic", reason, "exhausted");
    }
    const delayMs = backoffDelay(retry, used, deviation.error?.retryAfterMs);
    const reason = `${what}; attempt ${used + 1}/${retry.maxAttempts} in ${delayMs} ms`;
    return verdict("transient.retry", "transient", reason, { ...base, delayMs });
  },
  deterministic: (input, base, what) => afterPermanentFailure(input, base, "deterministic", what, "deterministic"),
  success_signal_unmet: (input, base, what) => {
    const { deviation, step, run, policy } = input;
    const retried = input.unmetRetried ?? (run?.attempts ?? 1) - (run?.retryBase ?? 0) >= 2;
    // The one retry is an attempt like any other: it counts against the step's maxAttempts
    // (docs/architecture.md, the ladder), so a step whose attempts are spent escalates instead.
    const used = (run?.attempts ?? deviation.attempt) - (run?.retryBase ?? 0);
    const attemptsLeft = used < effectiveRetry(step, policy).maxAttempts;
    if (step?.retryOnUnmet && !retried && attemptsLeft) {
      const reason = `${what}; the step is marked retryOnUnmet`;
      return verdict("unmet.retry-once", "success_signal_unmet", reason, { ...base, delayMs: 0 });
    }
    const [blamed] = activeAssumptions(step, input.replan);
    if (!blamed) {
      const reason = `${what}; the step rests on no assumption that could be replanned`;
      return escalateOrSkip(input, base, "success_signal_unmet", "unmet.escalate", reason);
    }
    const reason = `${what}: evidence against assumption "${blamed}"`;
    return replanOr(input, base, "success_signal_unmet", "unmet.replan-local", blamed, reason);
  },
  assumption_broken: (input, base, what) => {
    const { deviation } = input;
    const assumption = namedAssumption(deviation);
    if (!assumption)
      return escalateOrSkip(input, base, "assumption_broken", "assumption.unnamed", `${what}; no assumption was named`);
    const several = deviation.kind === "assumption_broken" ? (deviation.assumptionIds ?? []) : [];
    if (several.length > 1) {
      const reason = `assumptions ${several.map((a) => `"${a}"`).join(", ")} are false at once: ${what}`;
      return replanOr(input, base, "assumption_broken", "assumption.several-global", assumption, reason);
    }
    const reason = `assumption "${assumption}" is false: ${what}`;
    const drifted = deviation.kind === "assumption_broken" && deviation.watch !== undefined;
    const rule = drifted ? "assumption.drift" : "assumption.replan-local";
    return replanOr(input, base, "assumption_broken", rule, assumption, reason);
  },
  precondition_failed: (input, base, what) => {
    if (input.deviation.kind === "stale_evidence") {
      const answer = input.stale ?? {
        rule: "evidence.stale-escalate",
        reason: `${what}; nobody said who observes it again`,
      };
      if (answer.rule === "evidence.stale") return verdict(answer.rule, "precondition_failed", answer.reason, base);
      return escalateOrSkip(input, base, "precondition_failed", answer.rule, answer.reason);
    }
    const blamed = (input.producerAssumptions ?? []).find((a) => !input.replan.falsified.includes(a));
    if (!blamed) {
      const reason = `${what}; re-running earlier steps cannot fix it (no assumption to revise)`;
      return escalateOrSkip(input, base, "precondition_failed", "precondition.escalate", reason);
    }
    const reason = `${what}; the steps producing those facts rest on "${blamed}"`;
    return replanOr(input, base, "precondition_failed", "precondition.replan-producers", blamed, reason);
  },
  scope_changed: (input, base, what) => replanOr(input, base, "scope_changed", "scope.replan-global", undefined, what),
  budget_exhausted: (input, base, what) => {
    const reason = `${what}; asking the planner for a cheaper route`;
    return replanOr(input, base, "budget_exhausted", "budget.replan-cheaper", undefined, reason);
  },
  unknown: (input, base, what) =>
    escalateOrSkip(input, base, "unknown", "unknown.escalate", `${what}; no rule recognised this failure`),
  none: (input, base, what) =>
    escalateOrSkip(input, base, "unknown", "unknown.escalate", `${what}; no rule recognised this failure`),
};

/**
 * Deterministic failure (or exhausted retries): fallback → local replan → skip if optional → escalate.
 * The rungs after a permanent failure, named by how it became permanent (a deterministic error,
 * or retries exhausted).
 */
const PERMANENT_RUNGS = {
  deterministic: {
    fallback: "deterministic.fallback",
    replan: "deterministic.replan-local",
    escalate: "deterministic.escalate",
  },
  exhausted: { fallback: "exhausted.fallback", replan: "exhausted.replan-local", escalate: "exhausted.escalate" },
} as const satisfies Record<string, Record<"fallback" | "replan" | "escalate", RuleId>>;

function afterPermanentFailure(
  input: ClassifyInput,
  base: { evidence: string },
  failureClass: FailureClass,
  reason: string,
  how: keyof typeof PERMANENT_RUNGS,
): Verdict {
  const rungs = PERMANENT_RUNGS[how];
  const { step, run } = input;
  if (step?.fallback && !run?.usedFallback) {
    return verdict(rungs.fallback, failureClass, `${reason}; switching to fallback tool "${step.fallback.tool}"`, base);
  }
  // An output the run cannot store says nothing about the plan's assumptions.
  const [blamed] = input.deviation.kind === "output_rejected" ? [] : activeAssumptions(step, input.replan);
  if (blamed)
    return replanOr(
      input,
      base,
      failureClass,
      rungs.replan,
      blamed,
      `${reason}; the step rests on assumption "${blamed}"`,
    );
  return escalateOrSkip(
    input,
    base,
    failureClass,
    rungs.escalate,
    `${reason}; no fallback and no assumption to revise`,
  );
}

function activeAssumptions(step: Step | undefined, standing: ReplanStanding): string[] {
  return (step?.assumptions ?? []).filter((a) => !standing.falsified.includes(a));
}

/** A replan if the guardrails allow it; otherwise the guardrail's rule escalates (or skips an optional step). */
function replanOr(
  input: ClassifyInput,
  base: { evidence: string },
  failureClass: FailureClass,
  rule: RuleId,
  assumption: string | undefined,
  reason: string,
): Verdict {
  const named = assumption === undefined ? {} : { brokenAssumption: assumption };
  const guard = replanGuard(input, assumption);
  if (guard) return { ...escalateOrSkip(input, base, failureClass, guard.rule, `${reason}; ${guard.why}`), ...named };
  return verdict(rule, failureClass, reason, { ...base, ...named });
}

type GuardCheck = (input: ClassifyInput, assumption: string | undefined) => string | undefined;

/** Why each replan guard stops a replan, or undefined; checked in the rule table's order (`rulesOf`). */
const REPLAN_GUARDS: Record<RuleIdOf<"replan-guard">, GuardCheck> = {
  "replan.unavailable": ({ replan }) => (replan.available ? undefined : plannerUnavailable("replan").reason),
  "guard.max-replans": ({ replan, policy }) =>
    replan.count >= policy.maxReplans
      ? `${replan.count} replans already (policy.maxReplans = ${policy.maxReplans})`
      : undefined,
  "guard.replan-budget": ({ replan, policy }) => {
    const maxCost = policy.budget.maxReplanCost;
    return maxCost !== undefined && replan.spent >= maxCost
      ? `replan budget spent (${replan.spent} of ${maxCost})`
      : undefined;
  },
  "guard.replan-cooldown": ({ replan, policy }, assumption) =>
    assumption !== undefined && replan.coolingDown.includes(assumption)
      ? `assumption "${assumption}" was just replanned and no step has succeeded since ` +
        `(policy.replanCooldownSteps = ${policy.replanCooldownSteps})`
      : undefined,
};

/** The first guardrail that stops a replan, checked in the order the rule table lists them. */
function replanGuard(input: ClassifyInput, assumption: string | undefined): { rule: RuleId; why: string } | undefined {
  for (const rule of rulesOf("replan-guard")) {
    const why = REPLAN_GUARDS[rule](input, assumption);
    if (why !== undefined) return { rule, why };
  }
  return undefined;
}

function escalateOrSkip(
  input: ClassifyInput,
  base: { evidence: string },
  failureClass: FailureClass,
  rule: RuleId,
  reason: string,
): Verdict {
  if (input.step?.optional) {
    const note = `the step is optional, so it and its dependents are skipped (escalation rule was ${rule})`;
    return verdict("optional.skip", failureClass, `${reason}; ${note}`, base);
  }
  return verdict(rule, failureClass, reason, base);
}

/** A verdict under a rule: the action is the one the rule table states for it. */
function verdict(
  rule: RuleId,
  failureClass: FailureClass,
  reason: string,
  extra: { evidence: string; delayMs?: number; brokenAssumption?: string },
): Verdict {
  const action = actionsOf(rule)[0] ?? "escalate";
  return { ...extra, failureClass, action, rule, reason };
}

/** What the optional LLM classifier answered: its verdict, or why it could not give one. */
export type ClassifierAnswer =
  | { verdict: Partial<Verdict> & Pick<Verdict, "action" | "failureClass" | "reason"> }
  | { failure: { message: string } };

/**
 * The rule's verdict after the LLM classifier answered: a ladder action it chose is decided under
 * `llm.classifier`, keeping the evidence the rules found; any other answer, or a failure, leaves
 * the rule's verdict standing (a failure says why in its reason).
 */
export function classifierVerdict(ruled: Verdict, answer: ClassifierAnswer | undefined): Verdict {
  if (answer && "failure" in answer)
    return { ...ruled, reason: `${ruled.reason}; the LLM classifier failed: ${answer.failure.message}` };
  if (answer && LADDER_ACTIONS.includes(answer.verdict.action))
    return { ...ruled, ...answer.verdict, rule: "llm.classifier", evidence: ruled.evidence, by: "llm" };
  return ruled;
}
