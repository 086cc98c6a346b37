/** The finalize node: status and outcome — what was achieved, what was not, and why. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { PlanManagerStateType, PlanManagerUpdate } from "../runtime/state.js";
import type { Outcome } from "../plan/schema/outcome.js";
import { emit } from "../runtime/events.js";
import { stoppedOutcome } from "../policy/ladder/stop.js";
import { isMissing, missingEntry, replanTally, requiredUndone, uncertaintyNotes } from "./finalize/outcome.js";
import { degradedReasons, runQuality } from "../policy/quality/summary.js";

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

  const quality = runQuality(state);
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
    // `completed` means every non-optional step succeeded or was done by a person (docs/architecture.md "State and
    // channels").
    status = required.length > 0 ? "partial" : "completed";
    const verb =
      status === "partial"
        ? `Partly done "${state.goal}" (not done: ${required.join(", ")})`
        : `Completed "${state.goal}"`;
    const replans = replanTally(state.replans);
    // A completed run that rests on less than its plan promised says so first (docs/decisions/0040-plan-quality-gate.md).
    const degraded = status === "completed" && quality.degraded ? ` (degraded: ${degradedReasons(quality)})` : "";
    const shown = degraded ? `Completed${degraded} "${state.goal}"` : verb;
    outcome = {
      summary:
        `${shown}: ${tally}${missing.length ? `, ${missing.length} skipped` : ""}${replans} (plan ` +
        `v${plan?.version ?? 0}).`,
      quality,
    };
  }
  if (missing.length > 0) outcome.missing = missing;
  if (uncertainty.length > 0) outcome.uncertainty = uncertainty;
  emit(config, { type: "finished", status, summary: outcome.summary });
  return { status, outcome, pendingHuman: null, deviation: null };
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
