/**
 * Token and cost accounting for model calls (filled by LLM planners, classifiers and agent steps,
 * kept in `state.usage`).
 */
import type { ModelTier } from "../plan/schema/step.js";

/** One model call in `state.usage`, failed or not: what it was for, the model, tokens, latency and cost. */
export interface UsageEntry {
  /** `step`: a model call made while an agent step ran (docs/decisions/0021-agent-steps.md). */
  purpose: "plan" | "replan" | "extend" | "classify" | "step";
  model?: string;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  cost: number;
  at: string;
  /** Set when the call failed: an id to find the error in logs. */
  errorId?: string;
  /** For `step`: the step, its attempt, and the tier it ran on (when it names one). */
  stepId?: string;
  attempt?: number;
  tier?: ModelTier;
}
