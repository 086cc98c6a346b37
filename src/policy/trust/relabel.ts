/**
 * Trust relabelling (docs/architecture.md "Trust labels"): what falsified assumptions do to the facts' labels.
 * Pure.
 */
import type { Plan } from "../../plan/schema/plan.js";
import type { Fact } from "../../plan/schema/run.js";

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
