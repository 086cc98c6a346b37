/**
 * `planMiddleware(options)`: the governed plan inside LangChain's `createAgent` loop. The model
 * writes its plan with `write_plan`; every tool call of a plan step goes through the graph's
 * policy core (see docs/decisions/0022-agent-middleware.md); the plan is shown to the model
 * before every call.
 */
import { ToolMessage } from "@langchain/core/messages";
import { Command, isGraphBubbleUp } from "@langchain/langgraph";
import { createMiddleware, ToolInvocationError, type ToolCallRequest } from "langchain";
import type { Step } from "../plan/schema/step.js";
import { errorInfo } from "../policy/ladder/deviation.js";
import { refusedCall } from "../policy/ladder/refused-call.js";
import { unplannedEffect } from "../policy/capability/unplanned-effect.js";
import { afterAgent } from "./after-agent.js";
import { beforeStep } from "./before-step.js";
import { tracedMiddleware } from "../otel/agent-middleware.js";
import { beforeModel } from "./before-model.js";
import { updateEvents, writerOf } from "./agent-events.js";
import { decisionAt } from "./decisions.js";
import {
  resolveAgentOptions,
  type AgentTool,
  type PlanMiddlewareOptions,
  type ResolvedAgentOptions,
} from "./agent-options.js";
import { callKey, routeCall } from "./route.js";
import { holdCall, refuseRepeat, type CallEnv, type ToolReply } from "./settle.js";
import { AgentPlanState, refusalKey, type AgentPlanValues } from "./agent-state.js";
import { firstKey, runStep } from "./step-call.js";
import { callWithin } from "../runtime/run-attempt.js";
import type { CallOutcome } from "../policy/attempt/attempt.js";
import { TurnClaims, turnOf, type Claim } from "./turn.js";
import { reuseVerdict, sideEffecting } from "../policy/attempt/attempt.js";
import { preview } from "../policy/attempt/checks.js";
import { withPlanView } from "./plan-view.js";
import { heldCall } from "./call-taint.js";
import { journalFor } from "./agent-journal.js";
import type { UndoContext } from "./compensate.js";
import { overBudgetCall } from "./plan-budget.js";
import { WRITE_PLAN, writePlan, writePlanTool } from "./write-plan.js";
import { gaveUp, outputOf, probed, textOf, withKey, type CallProbe } from "./tool-call.js";

const SYSTEM_PROMPT =
  "Plan with write_plan before calling other tools: one step per tool call, with the steps each depends on " +
  "and the assumptions it rests on. The current plan is shown to you every turn; follow it, and revise it with " +
  "write_plan when told a step failed or an assumption is false.";

type Handler = (request: ToolCallRequest) => Promise<ToolMessage | Command> | ToolMessage | Command;

/**
 * The plan manager as a `createAgent` middleware: the model writes a plan with `write_plan`, and every tool
 * call of a plan step goes through the ladder, with idempotency keys, the effect journal and the replan
 * guards (docs/guides/create-agent.md).
 */
export function planMiddleware(options: PlanMiddlewareOptions = {}) {
  const resolved = resolveAgentOptions(options);
  /** The agent's tools, learned from the model calls (the tools are the agent's, the same for every thread). */
  const offered = new Map<string, AgentTool>();
  const shared: Shared = { offered, known: new Map(resolved.instances), flights: new Map(), turns: new TurnClaims() };
  const at = () => new Date(resolved.now()).toISOString();
  const middleware = createMiddleware({
    name: "planMiddleware",
    stateSchema: AgentPlanState,
    tools: [writePlanTool],
    beforeModel: {
      canJumpTo: ["end"],
      hook: (state, runtime) =>
        beforeModel(planValues<Parameters<typeof beforeModel>[0]>(state), {
          at,
          journal: journalFor(runtime.configurable),
          threadId: String(runtime.configurable?.thread_id ?? "agent"),
          undos: undoContext(resolved, shared, runtime.configurable, at),
        }),
    },
    afterAgent: (state, runtime) => {
      shared.turns.forget(String(runtime.configurable?.thread_id ?? "agent"));
      return afterAgent(planValues(state), writerOf(runtime));
    },
    wrapModelCall: (request, handler) => {
      for (const t of request.tools) if (typeof t.name === "string") offered.set(t.name, t);
      const state = planValues(request.state);
      const messages = withPlanView(request.messages, state);
      return handler({ ...request, messages, systemMessage: request.systemMessage.concat(`\n\n${SYSTEM_PROMPT}`) });
    },
    wrapToolCall: async (request, handler) => governed(request, handler as unknown as Handler, resolved, shared, at),
  });
  // Traced for OpenTelemetry when a provider is registered (docs/decisions/0052-opentelemetry.md).
  return tracedMiddleware(middleware);
}

/**
 * The plan's state as the middleware reads it. LangChain types a hook's state from the schema's zod
 * input (defaults optional), while the agent hands in the parsed values, with every default filled:
 * one place says so.
 */
function planValues<T extends AgentPlanValues = AgentPlanValues>(state: unknown): T {
  return state as T;
}

/**
 * What the middleware keeps across calls: the tools the model is offered, the step calls in flight
 * per thread, and the side-effecting steps the calls of a thread's model turn took.
 */
interface Shared {
  offered: Map<string, AgentTool>;
  /** Tools the middleware can call before the model's first call in a process: given in `tools`, or met in a call. */
  known: Map<string, AgentTool>;
  flights: Map<string, number>;
  turns: TurnClaims;
}

/** The undos of a thread: the tools the middleware knows, the thread's journal. */
function undoContext(
  options: ResolvedAgentOptions,
  { offered, known }: Shared,
  configurable: Record<string, unknown> | undefined,
  at: () => string,
): UndoContext {
  const threadId = String(configurable?.thread_id ?? "agent");
  const tool = (name: string) => offered.get(name) ?? known.get(name);
  return { options, tool, journal: journalFor(configurable), threadId, at };
}

/**
 * A call of a plan step. A side-effecting step takes one call per model turn: the first to reach it
 * runs it; another of the same operation gets its result (`effect.reused`), another of a different
 * one is refused (middleware/turn.ts).
 */
async function stepCall(
  env: CallEnv,
  request: ToolCallRequest,
  route: { step: Step; args: Record<string, unknown> },
  options: ResolvedAgentOptions,
  turns: TurnClaims,
): Promise<ToolReply> {
  const { step, args } = route;
  const call = { tool: request.toolCall.name, args };
  const run = () =>
    heldCall(env, step, call.tool, args, effectsOf(options, step, call.tool)) ??
    beforeStep(env, step, call, () => runStep(env, step, call.tool, args));
  const callId = request.toolCall.id;
  const turn = sideEffecting(step) ? turnOf(request.state.messages, callId) : undefined;
  if (turn === undefined || callId === undefined) return run();
  const key = firstKey(env, step, call.tool, args);
  const taken = turns.take(env.threadId, turn, { callId, stepId: step.id, key, args });
  if (taken.kind === "taken") return sameTurn(env, step, call, key, taken.claim);
  let result: ToolReply | undefined;
  try {
    result = await run();
    return result;
  } finally {
    taken.end(result);
  }
}

/** A second call of a side-effecting step in one model turn: the first's result for the same operation, else refused. */
async function sameTurn(
  env: CallEnv,
  step: Step,
  call: { tool: string; args: Record<string, unknown> },
  key: string | undefined,
  first: Claim,
): Promise<ToolReply> {
  if (key === undefined || first.key !== key) {
    const why =
      `step "${step.id}" is already being called in this model turn, with ${preview(first.args)}; ` +
      "a side-effecting step makes one call: for another, add a step with write_plan";
    return refuseNotReady(env, step, call, why);
  }
  const done = await first.done.catch(() => undefined);
  const effect = done?.update.sideEffects?.find((e) => e.idempotencyKey === key);
  // Another step's call made the operation: this step's call finds it committed, as a later turn's would.
  if (effect && first.stepId !== step.id) {
    const sideEffects = [...env.state.sideEffects, effect];
    return runStep({ ...env, state: { ...env.state, sideEffects } }, step, call.tool, call.args);
  }
  if (!effect) {
    const why = done ? `: ${done.content}` : "";
    const content = `Not run: step "${step.id}" is already being called in this model turn with the same arguments, and that call did not commit${why}`;
    return { content, status: "error", update: {} };
  }
  const { rule, reason } = reuseVerdict(step.id, effect.stepId, key);
  const attempts = done?.update.steps?.[step.id]?.attempts ?? 1;
  const decision = decisionAt(
    { rule, reason },
    { stepId: step.id, attempt: attempts, planVersion: env.state.plan!.version, at: env.at() },
  );
  const output = JSON.stringify(effect.output) ?? "null";
  const content = `Step "${step.id}" ran once for this operation in this model turn (not run again); its result: ${output}`;
  return { content, status: "success", update: { decisions: [decision] } };
}

async function governed(
  request: ToolCallRequest,
  handler: Handler,
  options: ResolvedAgentOptions,
  shared: Shared,
  at: () => string,
): Promise<ToolMessage | Command> {
  const state = planValues(request.state);
  const call = request.toolCall;
  // The agent's own tool for this call: one a later call may need before the model's next call.
  if (request.tool && typeof request.tool.name === "string" && !shared.known.has(request.tool.name))
    shared.known.set(request.tool.name, request.tool);
  const env = callEnv(request, handler, options, shared, at);
  const tools = new Set([...options.tools, ...shared.offered.keys()]);
  let result: ToolReply;
  if (call.name === WRITE_PLAN) result = await writePlan(env, call.args, tools);
  else {
    const route = routeCall(state, call.name, call.args);
    const dear = route.kind === "free" ? overBudgetCall(state, call.name) : undefined;
    if (dear) result = dear;
    else if (route.kind === "free") {
      const refused = unplannedEffect(call.name, call.args, state.plan?.version, options.sideEffectTools);
      if (!refused) return handler(request);
      const place = { attempt: 0, planVersion: state.plan?.version ?? 0, at: at() };
      const decision = decisionAt({ rule: refused.rule, reason: refused.reason }, place);
      result = { content: refused.message, status: "error", update: { decisions: [decision] } };
    } else if (route.kind === "done") {
      const output = JSON.stringify(route.output) ?? "null";
      result = {
        content: `Step "${route.step.id}" already succeeded (not run again); its result: ${output}`,
        status: "success",
        update: {},
      };
    } else if (route.kind === "refuse")
      result = state.planRun.failedCalls[callKey(route.step.id, call.name, route.args)]
        ? refuseRepeat(env, route.step, { tool: call.name, args: route.args })
        : refuseNotReady(env, route.step, { tool: call.name, args: route.args }, route.message);
    else result = await stepCall(env, request, route, options, shared.turns);
  }
  for (const event of updateEvents(result.update, state.plan, env.sent)) env.emit(event);
  const message = new ToolMessage({
    content: result.content,
    tool_call_id: call.id ?? "",
    name: call.name,
    status: result.status,
  });
  return new Command({ update: { ...result.update, messages: [message] } });
}

function callEnv(
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
    at,
    journal: journalFor(request.runtime.configurable),
    emit: writerOf(request.runtime),
    sent: new Set(),
    running: () => flights.get(threadId) ?? 0,
    call,
    invoke: (tool, args, key, timeoutMs) => callWithin(timeoutMs, undefined, (signal) => call(tool, args, key, signal)),
  };
}

/** A call to a step that cannot run: told why, counted, and past `policy.maxRefusedCalls` held for a person. */
function refuseNotReady(env: CallEnv, step: Step, call: { tool: string; args: Record<string, unknown> }, why: string) {
  const key = refusalKey(env.state.plan!.version, step.id);
  const count = (env.state.planRun.refusals?.[key] ?? 0) + 1;
  const verdict = refusedCall(step.id, why, count, env.options.policy);
  if (verdict.kind === "escalate") {
    const held = holdCall(env, step, call, verdict);
    return { ...held, update: { ...held.update, planRun: { ...held.update.planRun, refusals: { [key]: 0 } } } };
  }
  return { content: verdict.message, status: "error" as const, update: { planRun: { refusals: { [key]: count } } } };
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

/** The side effects of a step's call: the tool's own (`sideEffectTools`), or the step's when it declares them. */
function effectsOf(options: ResolvedAgentOptions, step: Step, tool: string): string[] {
  if (options.sideEffectTools.has(tool)) return [tool];
  return step.idempotent === false && tool === step.tool ? (step.sideEffects ?? []) : [];
}
