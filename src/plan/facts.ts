/** Fact helpers: a step and CEL see only trusted facts. */
import { beforeWriting } from "./pinned.js";
import type { Fact, FactLabel } from "./schema/run.js";
import type { Step } from "./schema/step.js";

export function factValues(
  facts: Readonly<Record<string, Fact>>,
  label: FactLabel = "trusted",
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, fact] of Object.entries(facts)) if (fact.label === label) out[key] = fact.value;
  return out;
}

/** `factValues(facts)` of each facts object asked about, kept right by `mergeFactsInPlace`. */
const trustedOf = new WeakMap<object, Record<string, unknown>>();

/**
 * The trusted values of `facts`, computed once per facts object: a run that merges its facts in
 * place keeps one object, whose trusted values `mergeFactsInPlace` updates key by key. Read-only:
 * the same object answers every later call.
 */
export function trustedValues(facts: Readonly<Record<string, Fact>>): Readonly<Record<string, unknown>> {
  let trusted = trustedOf.get(facts);
  if (!trusted) {
    trusted = factValues(facts);
    trustedOf.set(facts, trusted);
  }
  return trusted;
}

/** The keys written into each watched facts object since `watchFactWrites`, in place. */
const writtenKeys = new WeakMap<object, Set<string>>();

/**
 * Starts counting the keys written into `facts` in place from now on (`factsWrittenSince`): an
 * extension's record lists the facts that changed since the record before, without a look at every
 * fact of the run (plan/replan-records.ts `changedFacts`).
 */
export function watchFactWrites(facts: object): void {
  writtenKeys.set(facts, new Set());
}

/** The keys written into `facts` in place since `watchFactWrites(facts)`; undefined when it was not watched. */
export function factsWrittenSince(facts: object): ReadonlySet<string> | undefined {
  return writtenKeys.get(facts);
}

/** The facts channel's in-place merge (runtime/delta-channel.ts `mergeInPlace`), keeping `trustedValues` right. */
export function mergeFactsInPlace(current: Record<string, Fact>, writes: (Record<string, Fact> | undefined)[]) {
  const trusted = trustedOf.get(current);
  const written = writtenKeys.get(current);
  for (const write of writes) {
    if (write === undefined) continue;
    beforeWriting(current, Object.keys(write));
    Object.assign(current, write);
    if (written) for (const key of Object.keys(write)) written.add(key);
    if (!trusted) continue;
    beforeWriting(trusted, Object.keys(write));
    for (const key of Object.keys(write)) {
      const fact = current[key];
      if (fact?.label === "trusted") trusted[key] = fact.value;
      else delete trusted[key];
    }
  }
  return current;
}

/** The facts a step's output yields: `produces` picks fields; a non-object output with one key is stored under it. */
export function producedValues(step: Step, output: unknown): { values: Record<string, unknown>; missing: string[] } {
  const keys = step.produces ?? [];
  const values: Record<string, unknown> = {};
  const missing: string[] = [];
  const isObject = output !== null && typeof output === "object" && !Array.isArray(output);
  if (!isObject && keys.length === 1) {
    if (output === undefined) missing.push(keys[0]!);
    else values[keys[0]!] = output;
    return { values, missing };
  }
  for (const key of keys) {
    if (isObject && Object.hasOwn(output as object, key) && (output as Record<string, unknown>)[key] !== undefined) {
      values[key] = (output as Record<string, unknown>)[key];
    } else missing.push(key);
  }
  return { values, missing };
}

export function makeFacts(
  values: Record<string, unknown>,
  provenance: {
    producedBy: string;
    planVersion: number;
    assumptions?: readonly string[];
    derivedFrom?: readonly string[];
    /** When the values were observed, on the run's clock (ISO): what `freshFor` measures a fact's age from. */
    observedAt?: string;
  },
): Record<string, Fact> {
  const out: Record<string, Fact> = {};
  for (const [key, value] of Object.entries(values)) {
    out[key] = {
      value,
      label: "trusted",
      producedBy: provenance.producedBy,
      planVersion: provenance.planVersion,
      assumptions: [...(provenance.assumptions ?? [])],
      derivedFrom: [...(provenance.derivedFrom ?? [])],
      ...(provenance.observedAt !== undefined ? { observedAt: provenance.observedAt } : {}),
    };
  }
  return out;
}
