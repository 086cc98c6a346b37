/**
 * The rungs of an agent step before the ladder's (docs/decisions/0021-agent-steps.md): a model
 * that answered wrong is asked again with its previous answer and why it failed
 * (`agent.retry-with-feedback`), and a step with a tier moves one tier up once
 * (`route.escalate-tier`), all within the step's `retry.maxAttempts`. Pure.
 */
import type { FailureClass } from "../../plan/schema/decision.js";
import type { ErrorInfo, StepRun } from "../../plan/schema/run.js";
import type { ModelTier, Step } from "../../plan/schema/step.js";
import type { Deviation } from "./deviation.js";
import { classifyEvidence } from "./evidence-rules.js";
import type { ResolvedPolicy } from "../options.js";
import { effectiveRetry } from "../../plan/retry.js";

/** Tiers from cheapest to strongest: an escalation moves one place to the right. */
export const TIER_ORDER: readonly ModelTier[] = ["fast", "default", "strong"];

/** Failures a better answer can fix: the output check, the validation tool, a deterministic error. */
const ANSWER_FAILURES: readonly FailureClass[] = ["success_signal_unmet", "deterministic"];
const ANSWER_KINDS: readonly Deviation["kind"][] = ["signal_unmet", "error", "output_rejected", "timeout"];

export interface AgentRouteInput {
  deviation: Deviation;
  step: Step | undefined;
  run: StepRun | undefined;
  policy: ResolvedPolicy;
  failureClass: FailureClass;
  /** The tiers `models` configures, in any order. */
  tiers: readonly ModelTier[];
}

export interface AgentRoute {
  rule: "agent.retry-with-feedback" | "route.escalate-tier";
  reason: string;
  /** The tier the next attempt runs on, when the route moves it up. */
  tier?: ModelTier;
}

/** The tier a step's next attempt runs on: the one it moved up to, else its own. */
export function currentTier(step: Step, run: StepRun | undefined): ModelTier | undefined {
  return run?.tier ?? step.tier;
}

/** The next configured tier above `tier`, if any. */
export function tierAbove(tier: ModelTier, configured: readonly ModelTier[]): ModelTier | undefined {
  return TIER_ORDER.slice(TIER_ORDER.indexOf(tier) + 1).find((t) => configured.includes(t));
}

/** The agent rung for this failure, or undefined when the ladder's own rungs answer it. */
export function agentRoute(input: AgentRouteInput): AgentRoute | undefined {
  const { deviation, step, run, policy } = input;
  if (step?.agent === undefined || run?.usedFallback === true) return undefined;
  if (!ANSWER_FAILURES.includes(input.failureClass) || !ANSWER_KINDS.includes(deviation.kind)) return undefined;
  const retry = effectiveRetry(step, policy);
  const used = (run?.attempts ?? deviation.attempt) - (run?.retryBase ?? 0);
  if (used >= retry.maxAttempts) return undefined;
  const attempt = `attempt ${used + 1}/${retry.maxAttempts}`;
  const feedback = policy.agentFeedback ? "with its previous answer and why it failed" : "without feedback";
  const tier = currentTier(step, run);
  const up = step.tier !== undefined && run?.tier === undefined && tier ? tierAbove(tier, input.tiers) : undefined;
  if (tier && up) {
    const reason = `${deviation.message}; ${attempt} runs one tier up (${tier} → ${up}) ${feedback}`;
    return { rule: "route.escalate-tier", reason, tier: up };
  }
  return { rule: "agent.retry-with-feedback", reason: `${deviation.message}; ${attempt} ${feedback}` };
}

/**
 * Whether a failure recorded on a step says something about the model's answer, and so is worth
 * sending back: not a transient one (a 503, a rate limit, a timeout), which a retry waits out.
 */
export function isAnswerFailure(error: ErrorInfo): boolean {
  const kind = error.name === "StepTimeout" ? "timeout" : "error";
  return classifyEvidence({ kind, attempt: 0, message: error.message, error }).failureClass !== "transient";
}
