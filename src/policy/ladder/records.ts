/** What a ladder decision does to the step's record. Pure. */
import { ActionSchema, type Action } from "../../plan/schema/decision.js";
import { type StepRun } from "../../plan/schema/run.js";

/**
 * The record after the decision, or undefined when the decision leaves it as it is:
 * a retry waits `delayMs` and goes again; a fallback starts a fresh round of attempts on the
 * fallback tool; a skip marks an optional step skipped (its dependents follow).
 */
export function recordAfter(action: Action, run: StepRun, delayMs = 0): StepRun | undefined {
  switch (action) {
    case "retry":
      return { ...run, status: "pending", nextDelayMs: delayMs };
    case "fallback":
      return { ...run, status: "pending", usedFallback: true, retryBase: run.attempts };
    case "skip":
      return { ...run, status: "skipped", skipReason: "optional_failed" };
    case "refresh":
      return { ...run, status: "pending" };
    default:
      return undefined;
  }
}

/**
 * The LLM classifier is consulted only for failures the rules call `unknown`, and never once
 * the decision bound (`guard.max-decisions`) has fired: that bound is what ends every run. A call in
 * doubt is a person's to settle, never a model's guess.
 */
export function mayAskLlm(verdict: { failureClass: string; rule: string }): boolean {
  return (
    verdict.failureClass === "unknown" && verdict.rule !== "guard.max-decisions" && verdict.rule !== "effect.in-doubt"
  );
}

/**
 * Actions an LLM classifier may choose: the ladder's, never a person's nor a record's (`reuse`, `compensate`, `proceed`), nor
 * `refresh`, which only stale evidence calls for.
 */
const NOT_LADDER: ReadonlySet<Action> = new Set([
  "provide",
  "approve",
  "complete",
  "reuse",
  "compensate",
  "refresh",
  "proceed",
]);
export const LADDER_ACTIONS: readonly Action[] = ActionSchema.options.filter((a) => !NOT_LADDER.has(a));
