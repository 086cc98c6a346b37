/**
 * When the agent ends (its model answered without a tool call): the run's final status, and the
 * graph's `finished` event. No plan: the agent answered without one, and the run is complete. A
 * plan with steps left undone ends `partial`, never `running`, so a thread's status says the agent
 * stopped short (an interrupt ends a run before this hook: a waiting thread keeps its status).
 */
import { isFinished } from "../plan/ready.js";
import type { RunStatus } from "../plan/schema/outcome.js";
import type { Writer } from "./agent-events.js";
import { degradedReasons, runQuality } from "../policy/quality/summary.js";
import type { AgentPlanUpdate, AgentPlanValues } from "./agent-state.js";

export function afterAgent(state: AgentPlanValues, emit: Writer): AgentPlanUpdate {
  const status = endStatus(state);
  const summary = endSummary(state, status);
  emit({ type: "finished", status, summary });
  const update: AgentPlanUpdate = status === state.status ? {} : { status };
  // How well the plan went, as the graph's outcome says it (docs/decisions/0040-plan-quality-gate.md).
  if (state.plan && (status === "completed" || status === "partial")) {
    const quality = runQuality(state);
    update.outcome = { ...(status === "completed" && quality.degraded ? { summary } : {}), quality };
  }
  return update;
}

function endStatus(state: AgentPlanValues): RunStatus {
  if (!state.plan) return "completed";
  if (state.status !== "running" && state.status !== "planning") return state.status;
  return state.plan.steps.every((s) => isFinished(state.steps[s.id])) ? "completed" : "partial";
}

function endSummary(state: AgentPlanValues, status: RunStatus): string {
  if (!state.plan) return "finished without a plan";
  const succeeded = state.plan.steps.filter((s) => state.steps[s.id]?.status === "succeeded").length;
  const quality = runQuality(state);
  const degraded =
    status === "completed" && quality.degraded ? `completed (degraded: ${degradedReasons(quality)}): ` : "";
  return `${degraded}${succeeded} of ${state.plan.steps.length} steps succeeded (plan v${state.plan.version})`;
}
