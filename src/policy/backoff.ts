/** Backoff before the next attempt. Pure and without jitter, so tests see exact delays. */
import type { RetryPolicy } from "../plan/schema.js";

/**
 * Delay before attempt `failedAttempts + 1`. A server's Retry-After is honoured (never waiting
 * less than it asks), but the wait never exceeds `maxDelayMs` unless the server asked for more.
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
