import type { RetryPolicy, Step } from "../plan/schema.js";
import type { ResolvedPolicy } from "./options.js";

/** The step's retry policy: its own fields over the policy's default. */
export function effectiveRetry(step: Step | undefined, policy: ResolvedPolicy): RetryPolicy {
  return { ...policy.defaultRetry, ...step?.retry };
}
