/**
 * The run's own text as the capability guard reads it, indexed once and kept up to date
 * (record-texts.ts): its facts' values — what the caller or a person gave is trusted text, what a
 * tool or agent produced is not — and its steps' error messages. Reading it costs what changed
 * since the last review, not the run's length (docs/decisions/0058-incremental-taint-index.md).
 */
import type { Fact, StepRun } from "../../plan/schema/run.js";
import type { PlanVersionEntry } from "../../plan/history.js";
import type { Decision } from "../ladder/decision.js";
import { RecordTexts, recordTexts } from "./record-texts.js";
import { failureTexts, leaves, type TaintedText } from "./taint.js";
import { occurs } from "./words.js";

/** The shelves of a facts index: text the run vouches for, and text a tool or agent produced. */
export const VOUCHED = 0;
export const PRODUCED = 1;

/** A fact the caller gave or a person answered: its text vouches for a value, it does not taint one. */
export const givenFact = (fact: Pick<Fact, "producedBy">): boolean =>
  fact.producedBy === "input" || fact.producedBy === "human";

const factIndexes = new WeakMap<object, RecordTexts<Fact, string>>();

/** Every scalar of every fact's value, filed by whether it was given or produced; each entry's `meta` is its producer. */
export function factTexts(facts: Readonly<Record<string, Fact>>): RecordTexts<Fact, string> {
  return recordTexts(factIndexes, facts, () => new RecordTexts<Fact, string>(2, factLeaves));
}

function factLeaves(_key: string, fact: Fact) {
  const shelf = givenFact(fact) ? VOUCHED : PRODUCED;
  // The values themselves, not their JSON: a quote or newline in a page must match as written.
  return leaves(fact.value).map((text) => ({ text, meta: fact.producedBy, shelf }));
}

const runIndexes = new WeakMap<object, RecordTexts<StepRun, undefined>>();

/** The error message and evidence of each step's latest run (`failureTexts` of the step records). */
export function stepErrorTexts(steps: Readonly<Record<string, StepRun>>): RecordTexts<StepRun, undefined> {
  return recordTexts(runIndexes, steps, () => new RecordTexts<StepRun, undefined>(1, runErrors));
}

function runErrors(_key: string, run: StepRun) {
  if (!run.error) return [];
  const texts = new Set([run.error.message, ...leaves(run.error.evidence)]);
  return [...texts].map((text) => ({ text, meta: undefined, shelf: 0 }));
}

/** Untrusted text found by value: the first text, in the order a scan reads them, that the value occurs in. */
export interface TextLookup {
  find(value: string): TaintedText | undefined;
}

/**
 * What the run's failures told the planner (`failureTexts` of every step run, every earlier
 * version's runs and the decisions), then `extra` in order, looked up instead of listed. All of the
 * run's own are "a tool's error message"; only the steps' records grow with a long run, so only
 * they are indexed.
 */
export function failureLookup(
  run: {
    steps: Readonly<Record<string, StepRun>>;
    planHistory: readonly PlanVersionEntry[];
    decisions: readonly Pick<Decision, "reason" | "evidence" | "by">[];
  },
  extra: readonly TaintedText[] = [],
): TextLookup {
  let steps: RecordTexts<StepRun, undefined> | undefined;
  let rest: TaintedText[] | undefined;
  return {
    find(value) {
      steps ??= stepErrorTexts(run.steps);
      const found = steps.shelves[0]!.find(value);
      if (found !== undefined) return { text: found.text, source: "a tool's error message" };
      rest ??= failureTexts(
        run.planHistory.flatMap((e) => Object.values(e.runs ?? {})),
        run.decisions,
      );
      return rest.find((t) => occurs(value, t.text)) ?? extra.find((t) => occurs(value, t.text));
    },
  };
}
