/**
 * How a replan's replacement steps enter the plan (pure): merged in place of the affected
 * steps, producers of suspect facts re-run first, and which kept ids are unchanged.
 */
import { canonical } from "../../plan/diff.js";
import type { Fact } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";

/**
 * Re-validation of suspect facts: when a replacement step needs a suspect fact and the step
 * that produced it was in scope but not proposed again, that producer is re-run first (without
 * the falsified assumption). Its fresh output is trusted again; if it fails, the fact stays
 * out of reach of every step. Bounded like any backtrack.
 */
export function withRevalidation(
  replacement: readonly Step[],
  current: readonly Step[],
  affectedIds: readonly string[],
  suspect: readonly string[],
  facts: Readonly<Record<string, Fact>>,
  broken: readonly string[],
  kept: readonly string[],
): Step[] {
  const proposed = new Set(replacement.map((s) => s.id));
  // A fact the replacement produces again needs no re-validation.
  const reproduced = new Set(replacement.flatMap((s) => s.produces ?? []));
  const added: Step[] = [];
  const out = replacement.map((step) => {
    const extraDeps: string[] = [];
    for (const key of step.inputs ?? []) {
      if (!suspect.includes(key) || reproduced.has(key)) continue;
      const producer = current.find((s) => s.id === facts[key]?.producedBy);
      if (!producer || !affectedIds.includes(producer.id)) continue;
      const depsOk = (producer.dependsOn ?? []).every(
        (d) => kept.includes(d) || proposed.has(d) || added.some((a) => a.id === d),
      );
      if (!depsOk) continue;
      if (!proposed.has(producer.id) && !added.some((a) => a.id === producer.id)) {
        added.push({ ...producer, assumptions: (producer.assumptions ?? []).filter((a) => !broken.includes(a)) });
      }
      if (!(step.dependsOn ?? []).includes(producer.id)) extraDeps.push(producer.id);
    }
    return extraDeps.length > 0 ? { ...step, dependsOn: [...(step.dependsOn ?? []), ...extraDeps] } : step;
  });
  return [...added, ...out];
}

/** Replacement steps take the place of the first affected step; everything else keeps its order. */
export function mergeSteps(steps: readonly Step[], affected: readonly string[], replacement: readonly Step[]): Step[] {
  const out: Step[] = [];
  let inserted = false;
  for (const step of steps) {
    if (affected.includes(step.id)) {
      if (!inserted) {
        out.push(...replacement);
        inserted = true;
      }
      continue;
    }
    out.push(step);
  }
  if (!inserted) out.push(...replacement);
  return out;
}

/** The same definition (tool, arguments, inputs, dependencies, …); anything else kept by id is a changed step. */
export function sameStep(before: Step | undefined, after: Step): boolean {
  return before !== undefined && canonical(before) === canonical(after);
}
