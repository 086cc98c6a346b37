/**
 * The response ladder as a pure function: (deviation, step, standing, policy) → decision.
 * No LangGraph, no clock, no I/O: the same input always gives the same decision.
 *
 * Ladder: retry → fallback → local replan → global replan → escalate (→ abort by a person).
 * Each decision carries the id of the action rule that chose it (`rule`) and of the evidence
 * rule that named the failure class (`evidence`).
 */
import type { Action, FailureClass, ModelTier, Step, StepRun } from "../plan/schema.js";
import { agentRoute } from "./agent-routing.js";
import { backoffDelay } from "./backoff.js";
import type { Deviation } from "./deviation.js";
import { classifyEvidence } from "./evidence-rules.js";
import type { ResolvedPolicy } from "./options.js";
import { effectiveRetry } from "./retry.js";
import type { RuleId } from "./rules.js";

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
}

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

export function classify(input: ClassifyInput): Verdict {
  const { deviation, policy } = input;
  const evidence = classifyEvidence(deviation);
  const base = { evidence: evidence.id };
  const what = deviation.message;
  if (input.decisionCount >= policy.maxDecisions) {
    return {
      ...base,
      failureClass: evidence.failureClass,
      action: "escalate",
      rule: "guard.max-decisions",
      reason: `${policy.maxDecisions} decisions taken in this run (policy.maxDecisions); a person must look: ${what}`,
    };
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
  const { step, run } = input;
  const routed = agentRoute({
    deviation,
    step,
    run,
    policy,
    failureClass: evidence.failureClass,
    tiers: input.tiers ?? [],
  });
  if (routed) return { ...base, failureClass: evidence.failureClass, action: "retry", delayMs: 0, ...routed };
  return RUNGS_BY_CLASS[evidence.failureClass](input, base, what);
}

type Rungs = (input: ClassifyInput, base: { evidence: string }, what: string) => Verdict;

/** Each failure class's rungs, read top to bottom (DESIGN §2's table, one entry per row). */
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
    return { ...base, failureClass: "transient", action: "retry", rule: "transient.retry", delayMs, reason };
  },
  deterministic: (input, base, what) => afterPermanentFailure(input, base, "deterministic", what, "deterministic"),
  success_signal_unmet: (input, base, what) => {
    const { step, run } = input;
    if (step?.retryOnUnmet && (run?.attempts ?? 1) - (run?.retryBase ?? 0) < 2) {
      const reason = `${what}; the step is marked retryOnUnmet`;
      return {
        ...base,
        failureClass: "success_signal_unmet",
        action: "retry",
        rule: "unmet.retry-once",
        delayMs: 0,
        reason,
      };
    }
    const [blamed] = activeAssumptions(step, input.replan);
    if (!blamed) {
      const reason = `${what}; the step rests on no assumption that could be replanned`;
      return escalateOrSkip(input, base, "success_signal_unmet", "unmet.escalate", reason);
    }
    const reason = `${what}: evidence against assumption "${blamed}"`;
    return replanOr(input, base, "success_signal_unmet", "replan_local", "unmet.replan-local", blamed, reason);
  },
  assumption_broken: (input, base, what) => {
    const { deviation } = input;
    const assumption = deviation.assumptionId ?? deviation.error?.assumptionId;
    if (!assumption)
      return escalateOrSkip(input, base, "assumption_broken", "assumption.unnamed", `${what}; no assumption was named`);
    const several = deviation.assumptionIds ?? [];
    if (several.length > 1) {
      const reason = `assumptions ${several.map((a) => `"${a}"`).join(", ")} are false at once: ${what}`;
      return replanOr(
        input,
        base,
        "assumption_broken",
        "replan_global",
        "assumption.several-global",
        assumption,
        reason,
      );
    }
    const reason = `assumption "${assumption}" is false: ${what}`;
    return replanOr(input, base, "assumption_broken", "replan_local", "assumption.replan-local", assumption, reason);
  },
  precondition_failed: (input, base, what) => {
    const blamed = (input.producerAssumptions ?? []).find((a) => !input.replan.falsified.includes(a));
    if (!blamed) {
      const reason = `${what}; re-running earlier steps cannot fix it (no assumption to revise)`;
      return escalateOrSkip(input, base, "precondition_failed", "precondition.escalate", reason);
    }
    const reason = `${what}; the steps producing those facts rest on "${blamed}"`;
    return replanOr(
      input,
      base,
      "precondition_failed",
      "replan_local",
      "precondition.replan-producers",
      blamed,
      reason,
    );
  },
  scope_changed: (input, base, what) =>
    replanOr(input, base, "scope_changed", "replan_global", "scope.replan-global", undefined, what),
  budget_exhausted: (input, base, what) => {
    const reason = `${what}; asking the planner for a cheaper route`;
    return replanOr(input, base, "budget_exhausted", "replan_global", "budget.replan-cheaper", undefined, reason);
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
    return {
      ...base,
      failureClass,
      action: "fallback",
      rule: rungs.fallback,
      reason: `${reason}; switching to fallback tool "${step.fallback.tool}"`,
    };
  }
  // An output the run cannot store says nothing about the plan's assumptions.
  const [blamed] = input.deviation.kind === "output_rejected" ? [] : activeAssumptions(step, input.replan);
  if (blamed)
    return replanOr(
      input,
      base,
      failureClass,
      "replan_local",
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
  action: "replan_local" | "replan_global",
  rule: RuleId,
  assumption: string | undefined,
  reason: string,
): Verdict {
  const named = assumption === undefined ? {} : { brokenAssumption: assumption };
  const guard = replanGuard(input, assumption);
  if (guard) return { ...escalateOrSkip(input, base, failureClass, guard.rule, `${reason}; ${guard.why}`), ...named };
  return { ...base, failureClass, action, rule, reason, ...named };
}

/** The first guardrail that stops a replan, checked in the order the rule table lists them. */
function replanGuard(input: ClassifyInput, assumption: string | undefined): { rule: RuleId; why: string } | undefined {
  const { replan, policy } = input;
  if (!replan.available)
    return { rule: "replan.unavailable", why: "the planner cannot replan (it has no replan function)" };
  if (replan.count >= policy.maxReplans)
    return {
      rule: "guard.max-replans",
      why: `${replan.count} replans already (policy.maxReplans = ${policy.maxReplans})`,
    };
  const maxCost = policy.budget.maxReplanCost;
  if (maxCost !== undefined && replan.spent >= maxCost)
    return { rule: "guard.replan-budget", why: `replan budget spent (${replan.spent} of ${maxCost})` };
  if (assumption !== undefined && replan.coolingDown.includes(assumption)) {
    const why =
      `assumption "${assumption}" was just replanned and no step has succeeded since ` +
      `(policy.replanCooldownSteps = ${policy.replanCooldownSteps})`;
    return { rule: "guard.replan-cooldown", why };
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
    return {
      ...base,
      failureClass,
      action: "skip",
      rule: "optional.skip",
      reason: `${reason}; the step is optional, so it and its dependents are skipped (escalation rule was ${rule})`,
    };
  }
  return { ...base, failureClass, action: "escalate", rule, reason };
}
