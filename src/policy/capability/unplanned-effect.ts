/**
 * Inside createAgent a tool call that belongs to no plan step runs as it would without the plan.
 * For a side-effecting tool that would mean no idempotency key, no `sideEffects` record and no
 * review, so it is refused instead: the agent must add a step for it with `write_plan`, where
 * the revision guards and `reviewPlan` see it (docs/decisions/0027-middleware-governs-every-effect-and-cost.md).
 * Pure.
 */
import type { GuardHit } from "../ladder/guards.js";
import { preview } from "../attempt/checks.js";

/** The guard's decision and the message the agent reads in the refused call's place. */
export interface UnplannedEffect extends GuardHit {
  message: string;
}

export function unplannedEffect(
  tool: string,
  args: unknown,
  planVersion: number | undefined,
  sideEffectTools: ReadonlySet<string>,
): UnplannedEffect | undefined {
  if (!sideEffectTools.has(tool)) return undefined;
  const where = planVersion === undefined ? "there is no plan yet" : `no step of plan version ${planVersion} calls it`;
  const message =
    planVersion === undefined
      ? `Not run: ${tool} has side effects and there is no plan yet. Write the plan with write_plan first; ` +
        `a step for ${tool} runs under its idempotency key.`
      : `Not run: ${tool} has side effects and no step of the plan calls it. Add a step for it with write_plan; ` +
        "it runs as that step, under its idempotency key.";
  return {
    rule: "guard.unplanned-side-effect",
    reason: `${tool} has side effects and ${where}: ${preview(args)} was not run`,
    message,
  };
}
