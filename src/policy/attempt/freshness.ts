/**
 * Evidence freshness (docs/decisions/0041-evidence-freshness-and-drift.md): how old each input of a step may be
 * when it starts, which inputs are older than that, and whether a step waits for its inputs to be observed again.
 * Pure: the run's clock comes in as `now` (ms).
 */
import type { Fact, StepRun } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import type { CheckFailure } from "./checks.js";

/** A fact older than the step reading it allows. */
export interface StaleFact {
  key: string;
  ageMs: number;
  freshForMs: number;
  producedBy: string;
}

/** The freshness bound of each input the step bounds: `freshFor[key]`, else `inputsFreshForMs`. */
export function freshnessBounds(step: Step): [key: string, ms: number][] {
  const { freshFor, inputsFreshForMs } = step;
  if (freshFor === undefined && inputsFreshForMs === undefined) return [];
  const bounds: [string, number][] = [];
  for (const key of step.inputs ?? []) {
    const own = freshFor !== undefined && Object.hasOwn(freshFor, key) ? freshFor[key] : undefined;
    const ms = own ?? inputsFreshForMs;
    if (ms !== undefined) bounds.push([key, ms]);
  }
  return bounds;
}

/**
 * The trusted inputs of `step` observed longer ago than it allows, at `now`. A fact without `observedAt` (a
 * checkpoint written before facts were timed) is never stale; an input that is missing or not trusted is the
 * input check's to report.
 */
export function staleInputs(step: Step, facts: Readonly<Record<string, Fact>>, now: number): StaleFact[] {
  const bounds = freshnessBounds(step);
  if (bounds.length === 0) return [];
  const stale: StaleFact[] = [];
  for (const [key, freshForMs] of bounds) {
    const fact = Object.hasOwn(facts, key) ? facts[key] : undefined;
    if (fact?.label !== "trusted" || fact.observedAt === undefined) continue;
    const ageMs = now - Date.parse(fact.observedAt);
    if (ageMs > freshForMs) stale.push({ key, ageMs, freshForMs, producedBy: fact.producedBy });
  }
  return stale;
}

/** The check before a step starts: its stale inputs, as a deviation for the ladder (`evidence.stale`). */
export function checkFreshness(
  step: Step,
  facts: Readonly<Record<string, Fact>>,
  now: number,
): CheckFailure | undefined {
  const stale = staleInputs(step, facts, now);
  if (stale.length === 0) return undefined;
  const listed = stale
    .map((s) => `${s.key} (observed ${s.ageMs} ms ago by "${s.producedBy}"; freshFor ${s.freshForMs} ms)`)
    .join(", ");
  const message = `input${stale.length > 1 ? "s" : ""} too old for step "${step.id}": ${listed}`;
  return { deviation: { kind: "stale_evidence", message, stale }, error: { name: "StaleEvidence", message } };
}

/**
 * Whether `step` waits for an input being observed again: the fact is no longer trusted and the step that produced
 * it, still in the plan, is pending or running (it runs again after `evidence.stale`). Without this wait a step that
 * does not name the producer in `dependsOn` would start on the untrusted input and fail its input check.
 */
export function awaitsRefresh(
  step: Step,
  fact: (key: string) => Fact | undefined,
  steps: Readonly<Record<string, StepRun>>,
  inPlan: (id: string) => boolean,
): boolean {
  for (const key of step.inputs ?? []) {
    const f = fact(key);
    if (f === undefined || f.label === "trusted") continue;
    const producer = steps[f.producedBy];
    const again = producer?.status === "pending" || producer?.status === "running";
    if (again && inPlan(f.producedBy)) return true;
  }
  return false;
}
