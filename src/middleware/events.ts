/**
 * The graph's custom stream events (stream mode "custom"), sent from inside createAgent through the
 * writer LangChain hands to middleware hooks, so an agent's plan progress can be shown live as a
 * plan manager's is. The shapes are the graph's `PlanEvent`s (a type test keeps them equal).
 */
import type { ReplanRecord } from "../plan/schema/decision.js";
import type { StepStatus } from "../plan/schema/run.js";
import type { Decision } from "../policy/ladder/decision.js";
import type { AgentPlanUpdate } from "./state.js";
import type { Plan } from "../plan/schema/plan.js";

export type AgentEvent =
  | { type: "plan"; version: number; steps: { id: string; goal: string }[] }
  | { type: "step_started"; stepId: string; goal: string; attempt: number; tool?: string; running: number }
  | { type: "step_finished"; stepId: string; goal: string; status: StepStatus; attempt: number; note?: string }
  | { type: "decision"; decision: Decision }
  | { type: "replan"; record: ReplanRecord }
  | { type: "finished"; status: string; summary: string };

export type Writer = (event: AgentEvent) => void;

/** The writer of a hook's runtime, when the run streams custom events (else nothing is sent). */
export function writerOf(runtime: unknown): Writer {
  const writer = (runtime as { writer?: unknown } | undefined)?.writer;
  if (typeof writer !== "function") return () => undefined;
  return (event) => {
    try {
      (writer as Writer)(event);
    } catch {
      // A consumer's failing writer must not fail the step whose progress it shows.
    }
  };
}

export function planEvent(plan: Plan): AgentEvent {
  return { type: "plan", version: plan.version, steps: plan.steps.map((s) => ({ id: s.id, goal: s.goal })) };
}

/**
 * What a tool call's update reports, in the graph's order: decisions not sent yet, the plan
 * version it records and its replan record, and the steps it finished.
 */
export function updateEvents(
  update: AgentPlanUpdate,
  plan: Plan | undefined,
  sent: ReadonlySet<Decision>,
): AgentEvent[] {
  const events: AgentEvent[] = [];
  for (const decision of update.decisions ?? []) if (!sent.has(decision)) events.push({ type: "decision", decision });
  for (const record of update.replans ?? []) events.push({ type: "replan", record });
  if (update.plan) events.push(planEvent(update.plan));
  const steps = (update.plan ?? plan)?.steps ?? [];
  for (const [id, run] of Object.entries(update.steps ?? {})) {
    if (!run || run.status === "pending" || run.status === "running") continue;
    const goal = steps.find((s) => s.id === id)?.goal ?? id;
    events.push({ type: "step_finished", stepId: id, goal, status: run.status, attempt: run.attempts });
  }
  return events;
}
