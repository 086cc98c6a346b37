/**
 * Inside createAgent the model may call a step that cannot run yet (not ready, failed, resting on a
 * false assumption). It is told why and not run; past `policy.maxRefusedCalls` such calls to one
 * step of a plan version, a person is asked, so a model that keeps trying cannot loop until the
 * graph's recursion limit (docs/decisions/0022-agent-middleware.md). Pure.
 */
import type { GuardHit } from "./guards.js";
import type { ResolvedPolicy } from "../options.js";

export type RefusedCall =
  /** Tell the model why, and count the call. */
  | { kind: "refuse"; message: string }
  /** The bound is reached: hold the call and ask a person. */
  | ({ kind: "escalate" } & GuardHit);

/** `count`: the refused calls to this step of this plan version, this one included. */
export function refusedCall(
  stepId: string,
  why: string,
  count: number,
  policy: Pick<ResolvedPolicy, "maxRefusedCalls">,
): RefusedCall {
  if (count < policy.maxRefusedCalls) return { kind: "refuse", message: `Not run: ${why}.` };
  return {
    kind: "escalate",
    rule: "guard.refused-calls",
    reason:
      `the model called step "${stepId}" ${count} times while it could not run (${why}); ` +
      `policy.maxRefusedCalls is ${policy.maxRefusedCalls}`,
  };
}
