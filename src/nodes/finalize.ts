/** The finalize node: status and outcome — what was achieved, what was not, and why. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { PlanManagerStateType, PlanManagerUpdate } from "../runtime/state.js";
import type { Outcome, Step, StepRun } from "../plan/schema.js";
import { emit } from "../runtime/events.js";
import { stoppedOutcome } from "../policy/stop.js";

type Missing = NonNullable<Outcome["missing"]>[number];

export function finalizeNode(state: PlanManagerStateType, config: LangGraphRunnableConfig): PlanManagerUpdate {
  if (state.stop) return stopNode(state, config);
  const plan = state.plan;
  const steps = plan?.steps ?? [];
  const byTool = steps.filter(
    (s) => state.steps[s.id]?.status === "succeeded" && state.steps[s.id]?.doneBy !== "person",
  );
  const byPerson = steps.filter((s) => state.steps[s.id]?.doneBy === "person");
  const required = requiredUndone(steps, state.steps);
  const missing = steps.filter((s) => isMissing(state.steps[s.id])).map((s) => missingEntry(s, state.steps[s.id]!));
  const uncertainty = uncertaintyNotes(state, steps, missing, byPerson);

  let status = state.status;
  let outcome: Outcome;
  const tally =
    `${byTool.length} of ${steps.length} steps ` +
    `succeeded${byPerson.length ? `, ${byPerson.length} done by a person` : ""}`;
  if (status === "failed" || status === "aborted") {
    const prior = state.outcome ?? { summary: "" };
    const verb = status === "failed" ? "Failed" : "Aborted";
    outcome = {
      ...prior,
      summary:
        `${verb}${prior.failedStep ? ` at step "${prior.failedStep}"` : ""}: ` +
        `${prior.message ?? prior.failureReason ?? "no reason given"}. ${tally}.`,
    };
  } else {
    // `completed` means every non-optional step succeeded or was done by a person (DESIGN §4).
    status = required.length > 0 ? "partial" : "completed";
    const verb =
      status === "partial"
        ? `Partly done "${state.goal}" (not done: ${required.join(", ")})`
        : `Completed "${state.goal}"`;
    const replans = replanTally(state.replans);
    outcome = {
      summary:
        `${verb}: ${tally}${missing.length ? `, ${missing.length} skipped` : ""}${replans} (plan ` +
        `v${plan?.version ?? 0}).`,
    };
  }
  if (missing.length > 0) outcome.missing = missing;
  if (uncertainty.length > 0) outcome.uncertainty = uncertainty;
  emit(config, { type: "finished", status, summary: outcome.summary });
  return { status, outcome, pendingHuman: null, deviation: null };
}

/** What a reader should doubt about the result: steps not run, done by hand or by fallback, replans, suspect facts. */
function uncertaintyNotes(state: PlanManagerStateType, steps: Step[], missing: Missing[], byPerson: Step[]): string[] {
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

/** An operator's stop: the deviation and question pending stay, so that `resumeStopped` carries on from them. */
function stopNode(state: PlanManagerStateType, config: LangGraphRunnableConfig): PlanManagerUpdate {
  const steps = state.plan?.steps ?? [];
  const done = steps.filter((s) => state.steps[s.id]?.status === "succeeded").length;
  const stop = { ...state.stop!, previousStatus: state.stop!.previousStatus ?? state.status };
  const outcome = stoppedOutcome(stop, done, steps.length);
  emit(config, { type: "finished", status: "stopped", summary: outcome.summary });
  return { status: "stopped", outcome, stop };
}

function isMissing(run: StepRun | undefined): boolean {
  return (
    run?.status === "skipped" &&
    (run.skipReason === "optional_failed" || run.skipReason === "dependency_skipped" || run.skipReason === "human")
  );
}

function missingEntry(step: Step, run: StepRun): Missing {
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
function requiredUndone(steps: readonly Step[], runs: Readonly<Record<string, StepRun>>): string[] {
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
function replanTally(records: readonly { scope: string }[]): string {
  const count = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const extensions = records.filter((r) => r.scope === "extend").length;
  const replans = records.length - extensions;
  const parts = [
    ...(replans ? [count(replans, "replan")] : []),
    ...(extensions ? [count(extensions, "extension")] : []),
  ];
  return parts.length > 0 ? ` after ${parts.join(" and ")}` : "";
}
