import { evaluate } from "../../expr/cel.js";
import { isFinished, unfinishedSteps } from "../../plan/ready.js";
import type { Assumption, Plan } from "../../plan/schema/plan.js";
import type { StepRun } from "../../plan/schema/run.js";
import type { Deviation } from "../ladder/deviation.js";

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
  // A plan without checks has nothing to re-check: no scan of its open steps at every success.
  if (!plan.assumptions.some((assumption) => assumption.check)) return [];
  const active = new Set<string>();
  for (const step of unfinishedSteps(plan, steps))
    if (!isFinished(steps[step.id])) for (const a of step.assumptions ?? []) active.add(a);
  return plan.assumptions.filter((assumption) => {
    if (!assumption.check || !active.has(assumption.id) || falsified.includes(assumption.id)) return false;
    const result = evaluate(assumption.check, "check", trusted);
    return result.ok && result.value === false;
  });
}

/**
 * The deviation for assumption checks found false after a step (new evidence), or undefined.
 * The first one named is the one a replan addresses; several at once go global (`classify`).
 */
export function assumptionDeviation(
  broken: readonly Assumption[],
  stepId: string,
  attempt: number,
): Deviation | undefined {
  const [first] = broken;
  if (!first) return undefined;
  const others =
    broken.length > 1
      ? ` (also false: ${broken
          .slice(1)
          .map((a) => a.id)
          .join(", ")})`
      : "";
  return {
    kind: "assumption_broken",
    stepId,
    attempt,
    assumptionId: first.id,
    ...(broken.length > 1 ? { assumptionIds: broken.map((a) => a.id) } : {}),
    message:
      `assumption "${first.id}" (${first.statement}) is false after step "${stepId}": ` +
      `check ${JSON.stringify(first.check)}${others}`,
  };
}
