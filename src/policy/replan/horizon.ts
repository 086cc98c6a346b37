/**
 * Long goals (docs/architecture.md "Long goals"): how many times a rolling-horizon plan may be extended, and when a
 * running step counts as stalled. Pure: the clock's reading comes in as an argument.
 */
import type { Decision } from "../ladder/decision.js";
import type { ResolvedPolicy } from "../options.js";
import type { GuardHit } from "../ladder/guards.js";

/**
 * `policy.maxExtensions` bounds the extensions of one run. A person who answers `retry` at the
 * escalation grants one more: every earlier `guard.max-extensions` decision lifts the bound by one.
 */
export function extensionGuard(
  extensions: number,
  decisions: readonly Pick<Decision, "rule">[],
  policy: Pick<ResolvedPolicy, "maxExtensions">,
): GuardHit | undefined {
  const granted = decisions.filter((d) => d.rule === "guard.max-extensions").length;
  const limit = policy.maxExtensions + granted;
  if (extensions < limit) return undefined;
  return {
    rule: "guard.max-extensions",
    reason:
      `the plan was extended ${extensions} times and is still not complete ` +
      `(policy.maxExtensions = ${policy.maxExtensions}${granted > 0 ? `, ${granted} more granted by a person` : ""})`,
  };
}

/** When a step started at `startedAt` with `estimateMs` counts as stalled, or undefined without an estimate. */
export function stallDeadline(
  startedAt: number,
  estimateMs: number | undefined,
  policy: Pick<ResolvedPolicy, "stallFactor">,
): number | undefined {
  return estimateMs === undefined ? undefined : startedAt + Math.ceil(estimateMs * policy.stallFactor);
}
