/**
 * Replan scope (docs/architecture.md "The ladder"), as pure functions over the plan and the step records: which
 * steps a replan replaces, and the fingerprint that tells a replan from the one before it.
 */
import { executorOf } from "../../plan/executor-of.js";
import { isFinished } from "../../plan/ready.js";
import { canonical } from "../../plan/diff.js";
import type { Plan } from "../../plan/schema/plan.js";
import type { StepRun } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";

/**
 * Steps that rest on `assumption`, directly or through dependencies, in plan order. `also`
 * adds steps that must be replaced whatever they rest on (the failed step that found the
 * evidence).
 */
export function localScope(plan: Plan, assumption: string, also: readonly string[] = []): string[] {
  const inScope = new Set<string>();
  for (const step of plan.steps) {
    if (
      also.includes(step.id) ||
      (step.assumptions ?? []).includes(assumption) ||
      (step.dependsOn ?? []).some((d) => inScope.has(d))
    )
      inScope.add(step.id);
  }
  return plan.steps.filter((s) => inScope.has(s.id)).map((s) => s.id);
}

/** Every step not finished yet: what a global replan replaces; finished, trusted work is kept. */
export function globalScope(plan: Plan, steps: Readonly<Record<string, StepRun>>): string[] {
  return plan.steps.filter((s) => !isFinished(steps[s.id])).map((s) => s.id);
}

/**
 * The no-progress fingerprint of replacement steps: tools, arguments, inputs and dependency
 * shape, ids and goals ignored.
 */
export function fingerprint(steps: readonly Step[], assumption: string | undefined): string {
  const index = new Map(steps.map((s, i) => [s.id, i]));
  const shape = steps.map((s) => ({
    tool: executorOf(s),
    args: s.args ?? {},
    inputs: [...(s.inputs ?? [])].sort(),
    deps: (s.dependsOn ?? []).map((d) => (index.has(d) ? `#${index.get(d)}` : d)).sort(),
    fallback: s.fallback?.tool ?? null,
  }));
  return `${assumption ?? "*"}|${canonical(shape)}`;
}

/** How an attempted step is described to a planner as an approach already tried. */
export function describeApproach(step: Step): string {
  return `${executorOf(step)} ${canonical(step.args ?? {})}`;
}
