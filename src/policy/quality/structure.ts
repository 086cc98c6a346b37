/**
 * The gate's structural checks (docs/decisions/0040-plan-quality-gate.md), rule `quality.structure`,
 * severity medium:
 * - a side-effecting step without `successSignal`: nothing says whether the effect happened;
 * - a produced fact nothing uses: no step's `inputs`, no expression of the plan (`facts.key`; an
 *   assumption's `check` and its `watch.check` included), no estimate's `evidence`, and not the goal's
 *   (the goal names it, or its step is one no step depends on, whose facts are the run's result). Not checked in a plan that is not complete: the steps that
 *   read it may come with the next extension;
 * - a step that cannot fail loudly: a tool or agent step with no `successSignal`, no `produces` (a
 *   missing produced field fails a step) and no `validate`, so whatever it returns counts as done.
 *   Human steps are done by a person; a side-effecting step is reported once, by the first check.
 * Pure, and one pass over the plan: the per-step cost is bounded by the step's own expressions.
 */
import { stepPosition } from "../../plan/ready.js";
import type { Plan } from "../../plan/schema/plan.js";
import type { Step } from "../../plan/schema/step.js";
import { QUALITY_RULES, type QualityFinding } from "./findings.js";

const FACT_REFERENCE = /facts\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)|facts\s*\[\s*["']([^"'\]]+)["']\s*\]/g;
const WORD = /[A-Za-z_][A-Za-z0-9_]*/g;

function addReferences(expression: string | undefined, used: Set<string>): void {
  if (expression === undefined) return;
  for (const m of expression.matchAll(FACT_REFERENCE)) used.add(m[1] ?? m[2]!);
}

/** Fact keys something in the plan reads, and the ids of steps some step depends on. */
function planUses(plan: Plan): { used: Set<string>; dependedOn: Set<string> } {
  const used = new Set<string>();
  const dependedOn = new Set<string>();
  for (const step of plan.steps) {
    for (const key of step.inputs ?? []) used.add(key);
    for (const id of step.dependsOn ?? []) dependedOn.add(id);
    for (const p of step.preconditions ?? []) addReferences(p, used);
    addReferences(step.when, used);
    addReferences(step.successSignal, used);
    addReferences(step.validate?.successSignal, used);
    for (const key of step.compensate?.inputs ?? []) used.add(key);
    for (const key of step.verify?.inputs ?? []) used.add(key);
  }
  for (const a of plan.assumptions) {
    addReferences(a.check, used);
    addReferences(a.watch?.check, used);
    for (const key of a.estimate?.evidence ?? []) used.add(key);
  }
  return { used, dependedOn };
}

/** Findings about the `checked` steps of `plan` (every step when not given), read against the whole plan. */
export function structureFindings(plan: Plan, goal: string, checked?: ReadonlySet<string>): QualityFinding[] {
  const findings: QualityFinding[] = [];
  // What the plan reads is asked only of a complete plan: a rolling plan's extension, which checks
  // just the steps it adds, does not scan every step (docs/decisions/0050-compact-extension-records.md).
  let uses: ReturnType<typeof planUses> | undefined;
  const planUse = () => (uses ??= planUses(plan));
  const goalWords = new Set(goal.match(WORD) ?? []);
  const finding = (step: Step, message: string) =>
    findings.push({ rule: QUALITY_RULES.structure, severity: "medium", stepId: step.id, message });
  for (const step of checkedSteps(plan, checked)) {
    if (step.human !== undefined) continue;
    const effects = step.sideEffects ?? [];
    const produces = step.produces ?? [];
    if (effects.length > 0 && step.successSignal === undefined)
      finding(
        step,
        `step "${step.id}" has side effects (${effects.join(", ")}) but no successSignal: nothing checks that the effect happened`,
      );
    else if (step.successSignal === undefined && produces.length === 0 && step.validate === undefined)
      finding(
        step,
        `step "${step.id}" has no successSignal, produces nothing and has no validate: whatever it returns counts as done`,
      );
    if (plan.complete === false || !planUse().dependedOn.has(step.id)) continue;
    for (const key of produces)
      if (!planUse().used.has(key) && !goalWords.has(key))
        finding(step, `step "${step.id}" produces "${key}", which no step, expression or the goal uses`);
  }
  return findings;
}

/** The `checked` steps in plan order, found by the plan's index: not a walk of every step. */
function checkedSteps(plan: Plan, checked: ReadonlySet<string> | undefined): readonly Step[] {
  if (checked === undefined) return plan.steps;
  const at: number[] = [];
  for (const id of checked) {
    const i = stepPosition(plan, id);
    if (i !== undefined) at.push(i);
  }
  return at.sort((a, b) => a - b).map((i) => plan.steps[i]!);
}
