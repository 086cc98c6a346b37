/**
 * Retry, in one place: the default policy, the check of a policy's fields against each other, the
 * policy a step runs under, and the backoff before its next attempt. The policy's shape is
 * `RetryPolicySchema` (plan/schema/step.ts); which failures are retried is the ladder's
 * (policy/ladder/rules.ts).
 */
import type { RetryPolicy, Step } from "./schema/step.js";

/** The retry policy of steps that set none, unless `policy.defaultRetry` says otherwise. */
export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 3,
  backoff: "exponential",
  initialDelayMs: 200,
  maxDelayMs: 10_000,
};

/** Checks a retry policy's fields against each other; returns a message naming the field, or undefined. */
export function retryPolicyProblem(policy: RetryPolicy): string | undefined {
  if (policy.maxDelayMs < policy.initialDelayMs) {
    return `maxDelayMs (${policy.maxDelayMs}) cannot be less than initialDelayMs (${policy.initialDelayMs})`;
  }
  return undefined;
}

/** The step's retry policy: its own fields over the policy's default. */
export function effectiveRetry(
  step: Pick<Step, "retry"> | undefined,
  policy: { defaultRetry: RetryPolicy },
): RetryPolicy {
  return { ...policy.defaultRetry, ...step?.retry };
}

/**
 * Delay before attempt `failedAttempts + 1`, pure and without jitter, so tests see exact delays. A
 * server's Retry-After is honoured (never waiting less than it asks), but the wait never exceeds
 * `maxDelayMs` unless the server asked for more.
 */
export function backoffDelay(policy: RetryPolicy, failedAttempts: number, retryAfterMs?: number): number {
  let delay: number;
  switch (policy.backoff) {
    case "none":
      delay = 0;
      break;
    case "fixed":
      delay = policy.initialDelayMs;
      break;
    case "exponential":
      delay = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, failedAttempts - 1));
      break;
  }
  return retryAfterMs !== undefined && retryAfterMs > delay ? retryAfterMs : delay;
}
