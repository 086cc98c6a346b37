/**
 * Where a tool call of the agent goes (docs/decisions/0022-agent-middleware.md): `write_plan` to the
 * plan's revision, a call of no plan step to the chain below (unless it has side effects the plan does
 * not cover, or the budget is spent), a step already done or not ready to a reply, a step's call to
 * step-turn.ts. The reply becomes the tool message and the plan state's update.
 */
import { ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import type { ToolCallRequest } from "langchain";
import { unplannedEffect } from "../policy/capability/unplanned-effect.js";
import { updateEvents } from "./agent-events.js";
import type { ResolvedAgentOptions } from "./agent-options.js";
import { callEnv, planValues, type Handler, type Shared } from "./call-env.js";
import { decisionAt } from "./decisions.js";
import { refuseNotReady } from "./not-ready.js";
import { overBudgetCall } from "./plan-budget.js";
import { callKey, routeCall } from "./route.js";
import { refuseRepeat, type ToolReply } from "./settle.js";
import { stepCall } from "./step-turn.js";
import { WRITE_PLAN, writePlan } from "./write-plan.js";

/** A tool call of the agent, governed: routed, answered, and its reply written as the tool message and the state's update. */
export async function governed(
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
