/**
 * The plan as the model reads it before every call: steps with their status, assumptions (false
 * ones marked), facts with their trust labels, and what the middleware is waiting for. Rebuilt
 * from state each turn, so it survives summarization of the conversation.
 */
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { factValues } from "../plan/facts.js";
import { selectReady } from "../plan/ready.js";
import type { Step } from "../plan/schema/step.js";
import { preview } from "../policy/attempt/checks.js";
import type { AgentPlanValues } from "./agent-state.js";

/** Messages the middleware writes (notes for the next view; views of older versions) have ids starting with this. */
export const PLAN_VIEW_ID = "langgraph-replan-plan-view";
/** A note shown once with the next view (a person's answer at an escalation). */
export const PLAN_NOTE_ID = `${PLAN_VIEW_ID}-note`;

/**
 * The messages of a model request with the current plan view last: the middleware's own messages
 * (notes, old views) leave the history, and the view, with the notes after it, is appended.
 */
export function withPlanView(
  messages: readonly BaseMessage[],
  state: Pick<AgentPlanValues, "plan" | "steps" | "facts" | "planRun">,
): BaseMessage[] {
  const ours = (m: BaseMessage) => m.id?.startsWith(PLAN_VIEW_ID) === true;
  const notes = messages.filter((m) => m.id?.startsWith(PLAN_NOTE_ID)).map((m) => m.content);
  const view = planView(state);
  const text = [view, ...notes.map((n) => (typeof n === "string" ? n : JSON.stringify(n)))].filter(Boolean);
  const kept = messages.filter((m) => !ours(m));
  if (text.length === 0) return kept;
  return [...kept, new HumanMessage({ id: `${PLAN_VIEW_ID}-${kept.length}`, content: text.join("\n") })];
}

const MARK = {
  succeeded: "✓",
  failed: "✗",
  running: "…",
  skipped: "–",
  invalidated: "✗",
  pending: "·",
} as const;

export function planView(state: Pick<AgentPlanValues, "plan" | "steps" | "facts" | "planRun">): string | undefined {
  const plan = state.plan;
  if (!plan) return undefined;
  const readiness = selectReady(plan, state.steps, factValues(state.facts));
  const ready = new Set(readiness.kind === "ready" ? readiness.steps.map((s) => s.id) : []);
  const falsified = state.planRun.falsified;
  const lines = [`Current plan (version ${plan.version}), kept by langgraph-replan. Revise it only with write_plan.`];
  if (plan.assumptions.length > 0) {
    lines.push("Assumptions:");
    for (const a of plan.assumptions)
      lines.push(`  ${a.id}: ${a.statement}${falsified.includes(a.id) ? " — FALSE: no step may rest on it" : ""}`);
  }
  lines.push("Steps:");
  for (const step of plan.steps) lines.push(`  ${stepLine(step, state, ready.has(step.id))}`);
  const facts = Object.entries(state.facts);
  if (facts.length > 0) {
    lines.push("Facts:");
    for (const [key, fact] of facts) lines.push(`  ${key} = ${preview(fact.value)} [${fact.label}]`);
  }
  const trigger = state.planRun.trigger;
  if (trigger)
    lines.push(
      `Waiting for a write_plan revision: ${trigger.reason} (affected steps: ${trigger.affected.join(", ")}).`,
    );
  return lines.join("\n");
}

function stepLine(step: Step, state: Pick<AgentPlanValues, "steps" | "planRun">, ready: boolean): string {
  const run = state.steps[step.id];
  const status = run?.status ?? "pending";
  const tool = step.tool ? ` [${step.tool}${step.fallback ? `, fallback ${step.fallback.tool}` : ""}]` : "";
  const deps = step.dependsOn?.length ? ` after ${step.dependsOn.join(", ")}` : "";
  const rests = step.assumptions?.length ? ` rests on ${step.assumptions.join(", ")}` : "";
  const now = status === "pending" ? (ready ? "ready" : "waiting") : status;
  const error = status === "failed" && run?.error ? `: ${run.error.message}` : "";
  return `${MARK[status]} ${step.id}${tool} ${step.goal} — ${now}${error}${deps}${rests}`;
}
