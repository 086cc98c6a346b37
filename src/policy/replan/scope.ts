/**
 * Replan scope and trust relabelling (docs/architecture.md "The ladder", "Trust labels"), as pure functions over the
 * plan, the
 * step records and the facts.
 */
import { executorOf } from "../../plan/executor-of.js";
import { isFinished } from "../../plan/ready.js";
import { canonical } from "../../plan/diff.js";
import type { Plan } from "../../plan/schema/plan.js";
import type { Fact, StepRun } from "../../plan/schema/run.js";
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

export interface Relabelling {
  facts: Record<string, Fact>;
  trusted: string[];
  suspect: string[];
  invalidated: string[];
}

/**
 * Labels after the `broken` assumptions are falsified: facts of the step proven wrong are invalidated; facts
 * of steps resting on the assumption, and facts derived from those, become suspect; the rest
 * keeps its label.
 */
export function relabel(
  facts: Readonly<Record<string, Fact>>,
  plan: Plan,
  broken: readonly string[],
  provenWrong: string | undefined,
): Relabelling {
  const restsOn = new Set(
    plan.steps.filter((s) => (s.assumptions ?? []).some((a) => broken.includes(a))).map((s) => s.id),
  );
  const changed: Record<string, Fact> = {};
  const label = (key: string) => (changed[key] ?? facts[key])!.label;
  if (broken.length > 0) {
    for (const [key, fact] of Object.entries(facts)) {
      if (fact.label === "invalidated") continue;
      if (provenWrong !== undefined && fact.producedBy === provenWrong)
        changed[key] = { ...fact, label: "invalidated" };
      else if (restsOn.has(fact.producedBy) || fact.assumptions.some((a) => broken.includes(a)))
        changed[key] = { ...fact, label: "suspect" };
    }
    // Suspicion flows along derivedFrom until nothing changes.
    let grew = true;
    while (grew) {
      grew = false;
      for (const [key, fact] of Object.entries(facts)) {
        if (label(key) !== "trusted") continue;
        if (fact.derivedFrom.some((from) => Object.hasOwn(facts, from) && label(from) !== "trusted")) {
          changed[key] = { ...fact, label: "suspect" };
          grew = true;
        }
      }
    }
  }
  const keys = Object.keys(facts);
  return {
    facts: changed,
    trusted: keys.filter((k) => label(k) === "trusted"),
    suspect: keys.filter((k) => label(k) === "suspect"),
    invalidated: keys.filter((k) => label(k) === "invalidated"),
  };
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
