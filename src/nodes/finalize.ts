/** The finalize node: status and outcome — what was achieved, what was not, and why. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { PlanManagerStateType, PlanManagerUpdate } from "../graph/state.js";
import type { Outcome } from "../plan/schema.js";
import { emit } from "./events.js";

export function finalizeNode(state: PlanManagerStateType, config: LangGraphRunnableConfig): PlanManagerUpdate {
  const plan = state.plan;
  const steps = plan?.steps ?? [];
  const done = steps.filter((s) => state.steps[s.id]?.status === "succeeded");
  const missing = steps
    .filter((s) => {
      const run = state.steps[s.id];
      return run?.status === "skipped" && (run.skipReason === "optional_failed" || run.skipReason === "dependency_skipped" || run.skipReason === "human");
    })
    .map((s) => {
      const run = state.steps[s.id]!;
      const reason =
        run.skipReason === "optional_failed" ? `optional step failed: ${run.error?.message ?? "unknown error"}`
        : run.skipReason === "human" ? "skipped by a person"
        : "skipped because a step it depends on was skipped";
      return { stepId: s.id, goal: s.goal, facts: s.produces ?? [], reason };
    });
  const uncertainty = [
    ...missing.map((m) => `"${m.goal}" did not run (${m.reason})${m.facts.length ? `; missing: ${m.facts.join(", ")}` : ""}`),
    ...steps.filter((s) => state.steps[s.id]?.usedFallback && state.steps[s.id]?.status === "succeeded").map((s) => `"${s.goal}" used its fallback (${s.fallback?.tool})`),
    ...state.replans.filter((r) => r.scope === "local").map((r) => `plan v${r.toVersion} replaced ${r.invalidatedSteps.join(", ") || "no steps"} because assumption "${r.brokenAssumption}" was false`),
    ...Object.entries(state.facts).filter(([, f]) => f.label === "suspect").map(([k]) => `fact "${k}" is suspect and was not used`),
  ];

  let status = state.status;
  let outcome: Outcome;
  if (status === "failed" || status === "aborted") {
    const prior = state.outcome ?? { summary: "" };
    const verb = status === "failed" ? "Failed" : "Aborted";
    outcome = {
      ...prior,
      summary: `${verb}${prior.failedStep ? ` at step "${prior.failedStep}"` : ""}: ${prior.message ?? prior.failureReason ?? "no reason given"}. ${done.length} of ${steps.length} steps succeeded.`,
    };
  } else {
    status = "completed";
    outcome = {
      summary: `Completed "${state.goal}": ${done.length} of ${steps.length} steps succeeded${missing.length ? `, ${missing.length} skipped` : ""}${state.replans.length ? ` after ${state.replans.length} replan${state.replans.length > 1 ? "s" : ""}` : ""} (plan v${plan?.version ?? 0}).`,
    };
  }
  if (missing.length > 0) outcome.missing = missing;
  if (uncertainty.length > 0) outcome.uncertainty = uncertainty;
  emit(config, { type: "finished", status, summary: outcome.summary });
  return { status, outcome, pendingHuman: null, deviation: null };
}
