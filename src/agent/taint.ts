/**
 * What the model read that no one vouched for, for the capability guard on a `write_plan`
 * revision (docs/decisions/0013-untrusted-facts-do-not-steer-the-plan.md): every tool result in the
 * conversation — outputs and error messages, of plan steps and of free calls alike — and the
 * failures the plan state records, which outlive a summarized history.
 */
import { ToolMessage } from "@langchain/core/messages";
import { failureTexts, type TaintedText } from "../policy/capability-taint.js";
import type { AgentPlanValues } from "./state.js";
import { textOf } from "./tool-call.js";

export function untrustedText(state: AgentPlanValues): TaintedText[] {
  const messages = (state as { messages?: unknown }).messages;
  const results = Array.isArray(messages) ? messages.filter((m) => ToolMessage.isInstance(m)) : [];
  const texts: TaintedText[] = results.map((m) => ({
    text: textOf(m.content),
    source: m.status === "error" ? "a tool's error message" : "tool output",
  }));
  const runs = [...Object.values(state.steps), ...state.planHistory.flatMap((e) => Object.values(e.runs ?? {}))];
  const reports = [
    ...(state.planRun.trigger ? [{ reason: state.planRun.trigger.reason }] : []),
    ...Object.values(state.planRun.escalations).flatMap((e) => (e ? [{ reason: e.reason }] : [])),
    ...state.decisions,
  ];
  return [...texts, ...failureTexts(runs, reports)];
}
