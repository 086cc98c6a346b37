import { evaluate } from "../expr/cel.js";
import { isFinished } from "../plan/ready.js";
import type { Assumption, Plan, StepRun } from "../plan/schema.js";

/**
 * The active assumptions whose check is now false, in plan order. Active: some step not yet finished
 * rests on it, and it is not already falsified. A check that needs a missing fact is not a
 * falsification (the evidence is not in yet).
 */
export function activeAssumptionChecks(
  plan: Plan,
  steps: Readonly<Record<string, StepRun>>,
  falsified: readonly string[],
  trusted: Readonly<Record<string, unknown>>,
): Assumption[] {
  const active = new Set<string>();
  for (const step of plan.steps) if (!isFinished(steps[step.id])) for (const a of step.assumptions ?? []) active.add(a);
  return plan.assumptions.filter((assumption) => {
    if (!assumption.check || !active.has(assumption.id) || falsified.includes(assumption.id)) return false;
    const result = evaluate(assumption.check, "check", trusted);
    return result.ok && result.value === false;
  });
}
