/**
 * What the model read that no one vouched for, for the capability guard on a `write_plan`
 * revision (docs/decisions/0013-untrusted-facts-do-not-steer-the-plan.md): every tool result in the
 * conversation — outputs and error messages, of plan steps and of free calls alike — and the
 * failures the plan state records, which outlive a summarized history.
 */
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { factValues } from "../plan/facts.js";
import type { Step } from "../plan/schema/step.js";
import { capabilityBaseline } from "../policy/capability/guard.js";
import { failureTexts, type TaintedText } from "../policy/capability/taint.js";
import { untrustedCall } from "../policy/capability/untrusted-call.js";
import { quotesTheModel } from "../policy/replan/plan-writes.js";
import { PLAN_VIEW_ID } from "./plan-view.js";
import { callKey } from "./route.js";
import { holdCall, type CallEnv, type ToolReply } from "./settle.js";
import type { AgentPlanValues } from "./agent-state.js";
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
    ...state.decisions.filter((d) => !quotesTheModel(d)),
  ];
  return [...texts, ...failureTexts(runs, reports)];
}

/**
 * What the run vouches for: the user's words (the goal and every human message but the plan view the
 * middleware writes, which quotes facts) and the arguments of the plan versions' side-effecting
 * steps, which the guards checked when the version was written. A read-only step's arguments were
 * never checked, so they vouch for nothing: else a first plan could carry an account read in a
 * tool's output on a free search step, and the payment's call would pass.
 */
export function vouchedText(state: AgentPlanValues): string[] {
  const messages = (state as { messages?: unknown }).messages;
  const said = Array.isArray(messages)
    ? messages
        .filter((m) => HumanMessage.isInstance(m) && !m.id?.startsWith(PLAN_VIEW_ID))
        .map((m) => textOf(m.content))
    : [];
  const versions = [...(state.plan ? [state.plan.steps] : []), ...state.planHistory.map((e) => e.replaced)];
  const checked = versions.flat().filter((s) => s.idempotent === false && (s.sideEffects?.length ?? 0) > 0);
  return capabilityBaseline(versions, [state.goal, ...said], checked).known;
}

/**
 * A side-effecting call of a plan step whose model-chosen arguments carry untrusted text waits for
 * a person (`guard.untrusted-arguments`) instead of running; a call a person already allowed at
 * that escalation (its `failedCalls` entry cleared to `false`) runs.
 */
export function heldCall(
  env: CallEnv,
  step: Step,
  tool: string,
  args: Record<string, unknown>,
  sideEffects: string[],
): ToolReply | undefined {
  if (sideEffects.length === 0) return undefined;
  if (env.state.planRun.failedCalls[callKey(step.id, tool, args)] === false) return undefined;
  const call = { stepId: step.id, tool, args, sideEffects };
  const hit = untrustedCall(call, vouchedText(env.state), factValues(env.state.facts), untrustedText(env.state));
  return hit ? holdCall(env, step, { tool, args }, hit) : undefined;
}
