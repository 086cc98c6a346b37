/**
 * What a finished run's outcome says beside its status: the steps that did not run, and what a
 * reader should doubt about the result. Pure functions of the state, for the finalize node.
 */
import type { PlanManagerStateType } from "../../runtime/state.js";
import type { Outcome } from "../../plan/schema/outcome.js";
import type { StepRun } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";

export type Missing = NonNullable<Outcome["missing"]>[number];

/** What a reader should doubt about the result: steps not run, done by hand or by fallback, replans, suspect facts. */
export function uncertaintyNotes(
  state: PlanManagerStateType,
  steps: Step[],
  missing: Missing[],
  byPerson: Step[],
): string[] {
  return [
    ...missing.map(
      (m) => `"${m.goal}" did not run (${m.reason})${m.facts.length ? `; missing: ${m.facts.join(", ")}` : ""}`,
    ),
    ...byPerson.map(
      (s) =>
        `"${s.goal}" was done by a person, not by its ` +
        `tool${s.sideEffects?.length ? ` (its side effects did not happen: ${s.sideEffects.join(", ")})` : ""}`,
    ),
    ...steps
      .filter((s) => state.steps[s.id]?.usedFallback && state.steps[s.id]?.status === "succeeded")
      .map((s) => `"${s.goal}" used its fallback (${s.fallback?.tool})`),
    ...state.replans
      .filter((r) => r.scope === "local")
      .map(
        (r) =>
          `plan v${r.toVersion} replaced ${r.invalidatedSteps.join(", ") || "no steps"} because assumption ` +
          `"${r.brokenAssumption}" was false`,
      ),
    ...Object.entries(state.facts)
      .filter(([, f]) => f.label === "suspect")
      .map(([k]) => `fact "${k}" is suspect and was not used`),
  ];
}

export function isMissing(run: StepRun | undefined): boolean {
  return (
    run?.status === "skipped" &&
    (run.skipReason === "optional_failed" || run.skipReason === "dependency_skipped" || run.skipReason === "human")
  );
}

export function missingEntry(step: Step, run: StepRun): Missing {
  const reason =
    run.skipReason === "optional_failed"
      ? `optional step failed: ${run.error?.message ?? "unknown error"}`
      : run.skipReason === "human"
        ? "skipped by a person"
        : "skipped because a step it depends on was skipped";
  return { stepId: step.id, goal: step.goal, facts: step.produces ?? [], reason };
}

/**
 * Non-optional steps left undone: skipped by a person, or skipped because such a step was.
 * (Dependents of an optional step that failed are skipped by design; the outcome notes them.)
 */
export function requiredUndone(steps: readonly Step[], runs: Readonly<Record<string, StepRun>>): string[] {
  const undone = new Set<string>();
  // Plan order need not be dependency order: repeat until nothing is added.
  for (let grew = true; grew;) {
    grew = false;
    for (const step of steps) {
      const run = runs[step.id];
      if (step.optional || run?.status !== "skipped" || undone.has(step.id)) continue;
      const byDependency = run.skipReason === "dependency_skipped" && (step.dependsOn ?? []).some((d) => undone.has(d));
      if (run.skipReason === "human" || byDependency) {
        undone.add(step.id);
        grew = true;
      }
    }
  }
  return steps.filter((s) => undone.has(s.id)).map((s) => s.id);
}

/** " after 2 replans", " after 1 replan and 8 extensions": extensions plan ahead, they repair nothing. */
export function replanTally(records: readonly { scope: string }[]): string {
  const count = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const extensions = records.filter((r) => r.scope === "extend").length;
  const replans = records.length - extensions;
  const parts = [
    ...(replans ? [count(replans, "replan")] : []),
    ...(extensions ? [count(extensions, "extension")] : []),
  ];
  return parts.length > 0 ? ` after ${parts.join(" and ")}` : "";
}
