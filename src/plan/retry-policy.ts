import type { RetryPolicy } from "./schema.js";

/** Checks a retry policy's fields against each other; returns a message naming the field, or undefined. */
export function retryPolicyProblem(policy: RetryPolicy): string | undefined {
  if (policy.maxDelayMs < policy.initialDelayMs) {
    return `maxDelayMs (${policy.maxDelayMs}) cannot be less than initialDelayMs (${policy.initialDelayMs})`;
  }
  return undefined;
}
