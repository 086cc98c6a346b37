/**
 * Evidence freshness (docs/decisions/0041-evidence-freshness-and-drift.md): how old each input of a step may be
 * when it starts, which inputs are older than that, and whether a step waits for its inputs to be observed again.
 * Pure: the run's clock comes in as `now` (ms).
 */
import { factValues } from "../../plan/facts.js";
import type { ErrorInfo, Fact, StepRun } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import type { DeviationOf } from "../ladder/deviation.js";
import { checkInputs, type CheckFailure } from "./checks.js";

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

/** Where a step's inputs stand as its call arrives, from the run's snapshot and clock. */
export interface InputsSnapshot {
  step: Step;
  /** The step's record so far (undefined before its first call). */
  run: StepRun | undefined;
  facts: Readonly<Record<string, Fact>>;
  steps: Readonly<Record<string, StepRun>>;
  /** Whether a step of this id is in the plan. */
  inPlan: (id: string) => boolean;
  /** The run's clock (ms). */
  now: number;
}

export type FreshnessVerdict =
  /** The step reads a fact whose producer runs again (after `evidence.stale`): it waits for those producers. */
  | { kind: "waits"; producers: string[] }
  /** A trusted input is older than the step allows: the ladder answers `deviation` (`evidence.stale`). */
  | { kind: "stale"; deviation: DeviationOf<"stale_evidence">; error: ErrorInfo }
  | { kind: "fresh" };

/**
 * The freshness verdict on a step's inputs before its call, decided once: the call waits, is stale, or
 * may start. Only trusted inputs can be too old: one missing or not trusted is the input check's to report.
 */
export function freshnessVerdict(s: InputsSnapshot): FreshnessVerdict {
  const { step, run, facts } = s;
  // A person who allowed the step another round at an escalation has seen how old its inputs are.
  if (run?.status === "pending" && run.retryBase !== undefined) return { kind: "fresh" };
  if (awaitsRefresh(step, (k) => facts[k], s.steps, s.inPlan))
    return { kind: "waits", producers: refreshing(step, facts) };
  if (checkInputs(step, facts, factValues(facts))) return { kind: "fresh" };
  const stale = checkFreshness(step, facts, s.now);
  if (!stale) return { kind: "fresh" };
  const deviation = {
    ...stale.deviation,
    stepId: step.id,
    attempt: run?.attempts ?? 0,
  } as DeviationOf<"stale_evidence">;
  return { kind: "stale", deviation, error: stale.error };
}

/** The producers of the step's inputs that are no longer trusted, each once. */
function refreshing(step: Step, facts: Readonly<Record<string, Fact>>): string[] {
  const producers = (step.inputs ?? []).flatMap((k) => {
    const f = Object.hasOwn(facts, k) ? facts[k] : undefined;
    return f && f.label !== "trusted" ? [f.producedBy] : [];
  });
  return [...new Set(producers)];
}
