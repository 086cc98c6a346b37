/**
 * How a tool call of the agent reaches the tool: the state as the middleware reads it, the rest of the
 * middleware chain below this one (the agent's `handler`), the step calls of a thread in flight, and
 * the run's stop. What a call comes to is decided in policy; this file only performs it.
 */
import { ToolMessage } from "@langchain/core/messages";
import { Command, isGraphBubbleUp } from "@langchain/langgraph";
import { ToolInvocationError, type ToolCallRequest } from "langchain";
import type { CallOutcome } from "../policy/attempt/attempt.js";
import { errorInfo } from "../policy/ladder/deviation.js";
import { callWithin } from "../runtime/run-attempt.js";
import { writerOf } from "./agent-events.js";
import { journalFor } from "./agent-journal.js";
import type { AgentTool, ResolvedAgentOptions } from "./agent-options.js";
import type { AgentPlanValues } from "./agent-state.js";
import type { CallEnv } from "./settle.js";
import { gaveUp, outputOf, probed, textOf, withKey, type CallProbe } from "./tool-call.js";
import type { TurnClaims } from "./turn.js";
import { graphsOf } from "./stopped-drive.js";

/** The rest of the middleware chain, as LangChain hands it to `wrapToolCall`. */
export type Handler = (request: ToolCallRequest) => Promise<ToolMessage | Command> | ToolMessage | Command;

/**
 * The plan's state as the middleware reads it. LangChain types a hook's state from the schema's zod
 * input (defaults optional), while the agent hands in the parsed values, with every default filled:
 * one place says so.
 */
export function planValues<T extends AgentPlanValues = AgentPlanValues>(state: unknown): T {
  return state as T;
}

/**
 * What the middleware keeps across calls: the tools the model is offered, the step calls in flight
 * per thread, and the side-effecting steps the calls of a thread's model turn took.
 */
export interface Shared {
  offered: Map<string, AgentTool>;
  /** Tools the middleware can call before the model's first call in a process: given in `tools`, or met in a call. */
  known: Map<string, AgentTool>;
  flights: Map<string, number>;
  turns: TurnClaims;
}

/** What a tool call of a thread works with: the state, the clock, the journal, the stream, the run's stop and the chain below. */
export function callEnv(
  request: ToolCallRequest,
  handler: Handler,
  options: ResolvedAgentOptions,
  { offered, known, flights }: Shared,
  at: () => string,
): CallEnv {
  const threadId = String(request.runtime.configurable?.thread_id ?? "agent");
  const call: CallEnv["call"] = async (tool, args, key, signal) => {
    flights.set(threadId, (flights.get(threadId) ?? 0) + 1);
    try {
      const tools = { get: (name: string) => offered.get(name) ?? known.get(name) };
      return await toolCall(request, handler, tools, { tool, args, key }, signal);
    } finally {
      const left = (flights.get(threadId) ?? 1) - 1;
      if (left > 0) flights.set(threadId, left);
      else flights.delete(threadId);
    }
  };
  return {
    options,
    state: planValues(request.state),
    threadId,
    ...(request.toolCall.id ? { drive: { callId: request.toolCall.id, graphs: graphsOf(nsOf(request)) } } : {}),
    at,
    journal: journalFor(request.runtime.configurable),
    emit: writerOf(request.runtime),
    sent: new Set(),
    running: () => flights.get(threadId) ?? 0,
    stop: request.runtime.signal,
    call,
    invoke: (tool, args, key, timeoutMs) => callWithin(timeoutMs, undefined, (signal) => call(tool, args, key, signal)),
  };
}

/**
 * One call of a tool through the rest of the middleware chain. `calls` is how often the tool
 * itself ran (a retrying middleware below may call it several times); a failure turned into an
 * error message below is read as the error the tool threw, so the ladder sees its real class.
 * `signal` is the one driver's (its deadline; runtime/run-attempt.ts): the tool sees it abort, so a
 * hanging tool cannot hold the agent (docs/architecture.md, "The ladder").
 */
async function toolCall(
  request: ToolCallRequest,
  handler: Handler,
  tools: { get: (name: string) => AgentTool | undefined },
  call: { tool: string; args: Record<string, unknown>; key: string | undefined },
  signal: AbortSignal,
): Promise<CallOutcome> {
  const own = call.tool === request.toolCall.name ? request.tool : tools.get(call.tool);
  // Run by name, the tool would go out without its key: a probe could not find the charge, a
  // charge would not be deduplicated. Not called; a probe that cannot run asks a person.
  if (call.key !== undefined && own === undefined) {
    const message =
      `planMiddleware cannot hand tool "${call.tool}" its idempotency key: no model call in this process ` +
      "has offered it, and no call has met it; give the tool itself in planMiddleware({ tools })";
    return { ok: false, error: { name: "ToolUnavailable", message } };
  }
  const probe: CallProbe = { calls: 0 };
  const tool = own ? probed(call.key ? withKey(own, call.key) : own, probe, signal) : own;
  const calls = () => Math.max(1, probe.calls);
  try {
    const out = await handler({
      ...request,
      toolCall: { ...request.toolCall, name: call.tool, args: call.args },
      tool,
    });
    if (!ToolMessage.isInstance(out)) return { ok: true, text: "", output: undefined, calls: calls() };
    const text = textOf(out.content);
    if (out.status !== "error") return { ok: true, text, output: returned(probe, text), calls: calls() };
    if (probe.thrown) return { ok: false, error: thrownInfo(probe.thrown.error), calls: calls() };
    // Only a call the probe did not see is read from its message: a tool's own text claims nothing.
    const given = probe.calls === 0 ? gaveUp(text) : undefined;
    if (given) return { ok: false, error: { name: given.name, message: text }, calls: given.calls };
    return { ok: false, error: { name: "ToolError", message: text }, calls: calls() };
  } catch (error) {
    if (isGraphBubbleUp(error)) throw error;
    return { ok: false, error: thrownInfo(error), calls: calls() };
  }
}

/**
 * The output the policy judges: what the tool returned, as the graph judges it; text (a string the
 * tool returned, or a message a middleware below wrote) is read as JSON when it is JSON.
 */
function returned(probe: CallProbe, content: string): unknown {
  const value = probe.returned?.value;
  return probe.returned && typeof value !== "string" ? value : outputOf(content);
}

function thrownInfo(error: unknown) {
  return errorInfo(ToolInvocationError.isInstance(error) ? error.toolError : error);
}

/** The checkpoint namespace the call runs in (where LangGraph puts it in the run's config). */
function nsOf(request: ToolCallRequest): unknown {
  return (request.runtime.configurable as Record<string, unknown> | undefined)?.checkpoint_ns;
}
