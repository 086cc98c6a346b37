/**
 * The graph's custom stream events (stream mode "custom"), sent from inside createAgent through the
 * writer LangChain hands to middleware hooks, so an agent's plan progress can be shown live as a
 * plan manager's is. The shapes are the graph's `PlanEvent`s (a type test keeps them equal).
 */
import type { Decision } from "../policy/ladder/decision.js";
import type { PlanEvent } from "../runtime/events.js";
import { agentRun } from "../otel/agent-runs.js";
import type { AgentPlanUpdate } from "./agent-state.js";
import type { Plan } from "../plan/schema/plan.js";

export type AgentEvent = Exclude<PlanEvent, { type: "memory" } | { type: "step_stalled" }>;

export type Writer = (event: AgentEvent) => void;

/**
 * The writer of a hook's runtime, when the run streams custom events, and the thread's traced run,
 * when there is one (docs/decisions/0052-opentelemetry.md); else nothing is sent.
 */
export function writerOf(runtime: unknown): Writer {
  const writer = (runtime as { writer?: unknown } | undefined)?.writer;
  const run = agentRun(runtime);
  if (typeof writer !== "function") return run ? (event) => run.observe(event) : () => undefined;
  return (event) => {
    run?.observe(event);
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
    // The key of the effect the attempt committed, if it committed one.
    const key = update.sideEffects?.find((e) => e.stepId === id)?.idempotencyKey;
    const event = { type: "step_finished", stepId: id, goal, status: run.status, attempt: run.attempts } as const;
    events.push(key === undefined ? event : { ...event, key });
  }
  return events;
}
