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
import { beforeModel } from "./before-model.js";
import { updateEvents, writerOf } from "./events.js";
import { decide } from "./decisions.js";
import { resolveAgentOptions, type PlanMiddlewareOptions, type ResolvedAgentOptions } from "./options.js";
import { callKey, routeCall } from "./route.js";
import { holdCall, refuseRepeat, type CallEnv, type CallResult } from "./settle.js";
import { AgentPlanState, refusalKey, type AgentPlanValues } from "./state.js";
import { runStep, type AttemptResult } from "./step-call.js";
import { withPlanView } from "./plan-view.js";
import { heldCall } from "./taint.js";
import { journalFor } from "./journal.js";
import { overBudgetCall } from "./plan-budget.js";
import { WRITE_PLAN, writePlan, writePlanTool } from "./write-plan.js";
import { gaveUp, outputOf, probed, stepTimeout, textOf, withKey, type CallProbe } from "./tool-call.js";

type AgentTool = NonNullable<ToolCallRequest["tool"]>;

const SYSTEM_PROMPT =
  "Plan with write_plan before calling other tools: one step per tool call, with the steps each depends on " +
  "and the assumptions it rests on. The current plan is shown to you every turn; follow it, and revise it with " +
  "write_plan when told a step failed or an assumption is false.";

type Handler = (request: ToolCallRequest) => Promise<ToolMessage | Command> | ToolMessage | Command;

export function planMiddleware(options: PlanMiddlewareOptions = {}) {
  const resolved = resolveAgentOptions(options);
  /** The agent's tools, learned from the model calls (the tools are the agent's, the same for every thread). */
  const offered = new Map<string, AgentTool>();
  const shared: Shared = { offered, flights: new Map() };
  const at = () => new Date(resolved.now()).toISOString();
  return createMiddleware({
    name: "planMiddleware",
    stateSchema: AgentPlanState,
    tools: [writePlanTool],
    beforeModel: {
      canJumpTo: ["end"],
      hook: (state, runtime) =>
        beforeModel(state as unknown as Parameters<typeof beforeModel>[0], {
          at,
          journal: journalFor(runtime.configurable),
          threadId: String(runtime.configurable?.thread_id ?? "agent"),
        }),
    },
    afterAgent: (state, runtime) => afterAgent(state as unknown as AgentPlanValues, writerOf(runtime)),
    wrapModelCall: (request, handler) => {
      for (const t of request.tools) if (typeof t.name === "string") offered.set(t.name, t);
      const state = request.state as unknown as AgentPlanValues;
      const messages = withPlanView(request.messages, state);
      return handler({ ...request, messages, systemMessage: request.systemMessage.concat(`\n\n${SYSTEM_PROMPT}`) });
    },
    wrapToolCall: async (request, handler) =>
      governed(request as unknown as ToolCallRequest, handler as unknown as Handler, resolved, shared, at),
  });
}

/** What the middleware keeps across calls: the tools the model is offered, and the step calls in flight per thread. */
interface Shared {
  offered: Map<string, AgentTool>;
  flights: Map<string, number>;
}

async function governed(
  request: ToolCallRequest,
  handler: Handler,
  options: ResolvedAgentOptions,
  shared: Shared,
  at: () => string,
): Promise<ToolMessage | Command> {
  const state = request.state as unknown as AgentPlanValues;
  const call = request.toolCall;
  const env = callEnv(request, handler, options, shared, at);
  const tools = new Set([...options.tools, ...shared.offered.keys()]);
  let result: CallResult;
  if (call.name === WRITE_PLAN) result = await writePlan(env, call.args, tools);
  else {
    const route = routeCall(state, call.name, call.args);
    const dear = route.kind === "free" ? overBudgetCall(state, call.name) : undefined;
    if (dear) result = dear;
    else if (route.kind === "free") {
      const refused = unplannedEffect(call.name, call.args, state.plan?.version, options.sideEffectTools);
      if (!refused) return handler(request);
      const place = { attempt: 0, planVersion: state.plan?.version ?? 0, at: at() };
      const decision = decide({ rule: refused.rule, reason: refused.reason }, place);
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
    else
      result =
        heldCall(env, route.step, call.name, route.args, effectsOf(options, route.step, call.name)) ??
        (await runStep(env, route.step, call.name, route.args));
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
  { offered, flights }: Shared,
  at: () => string,
): CallEnv {
  const threadId = String(request.runtime.configurable?.thread_id ?? "agent");
  return {
    options,
    state: request.state as unknown as AgentPlanValues,
    threadId,
    at,
    journal: journalFor(request.runtime.configurable),
    emit: writerOf(request.runtime),
    sent: new Set(),
    running: () => flights.get(threadId) ?? 0,
    invoke: async (tool, args, key, timeoutMs) => {
      flights.set(threadId, (flights.get(threadId) ?? 0) + 1);
      try {
        return await attempt(request, handler, offered, { tool, args, key, timeoutMs });
      } finally {
        const left = (flights.get(threadId) ?? 1) - 1;
        if (left > 0) flights.set(threadId, left);
        else flights.delete(threadId);
      }
    },
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
 * One attempt of a tool through the rest of the middleware chain. `calls` is how often the tool
 * itself ran (a retrying middleware below may call it several times); a failure turned into an
 * error message below is read as the error the tool threw, so the ladder sees its real class.
 * Past `timeoutMs` the attempt ends as the graph's does (`StepTimeout`), and the tool's signal
 * aborts, so a hanging tool cannot hold the agent (docs/architecture.md, "The ladder").
 */
async function attempt(
  request: ToolCallRequest,
  handler: Handler,
  offered: Map<string, AgentTool>,
  call: { tool: string; args: Record<string, unknown>; key: string | undefined; timeoutMs: number },
): Promise<AttemptResult> {
  const own = call.tool === request.toolCall.name ? request.tool : offered.get(call.tool);
  const probe: CallProbe = { calls: 0 };
  const controller = new AbortController();
  const tool = own ? probed(call.key ? withKey(own, call.key) : own, probe, controller.signal) : own;
  const calls = () => Math.max(1, probe.calls);
  const pending = Promise.resolve().then(() =>
    handler({ ...request, toolCall: { ...request.toolCall, name: call.tool, args: call.args }, tool }),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = stepTimeout(call.timeoutMs);
  const timedOut = new Promise<Error>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(expired);
      resolve(expired);
    }, call.timeoutMs);
  });
  try {
    const out = await Promise.race([pending, timedOut]);
    if (out === expired) return { ok: false, error: errorInfo(out), timeout: true, calls: calls() };
    if (!ToolMessage.isInstance(out)) return { ok: true, content: "", output: undefined, calls: calls() };
    const content = textOf(out.content);
    if (out.status !== "error") return { ok: true, content, output: returned(probe, content), calls: calls() };
    if (probe.thrown) return { ok: false, error: thrownInfo(probe.thrown.error), calls: calls() };
    // Only a call the probe did not see is read from its message: a tool's own text claims nothing.
    const given = probe.calls === 0 ? gaveUp(content) : undefined;
    if (given) return { ok: false, error: { name: given.name, message: content }, calls: given.calls };
    return { ok: false, error: { name: "ToolError", message: content }, calls: calls() };
  } catch (error) {
    if (isGraphBubbleUp(error)) throw error;
    return { ok: false, error: thrownInfo(error), calls: calls() };
  } finally {
    clearTimeout(timer);
    pending.catch(() => undefined);
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
