/**
 * `planMiddleware(options)`: the governed plan inside LangChain's `createAgent` loop. The model
 * writes its plan with `write_plan`; every tool call of a plan step goes through the graph's
 * policy core (see docs/decisions/0022-agent-middleware.md); the plan is shown to the model
 * before every call. This file wires the agent's hooks; a tool call is routed in route-call.ts.
 */
import { createMiddleware } from "langchain";
import { tracedMiddleware } from "../otel/agent-middleware.js";
import { afterAgent } from "./after-agent.js";
import { writerOf } from "./agent-events.js";
import { journalFor } from "./agent-journal.js";
import {
  resolveAgentOptions,
  type AgentTool,
  type PlanMiddlewareOptions,
  type ResolvedAgentOptions,
} from "./agent-options.js";
import { AgentPlanState } from "./agent-state.js";
import { beforeModel } from "./before-model.js";
import { planValues, type Handler, type Shared } from "./call-env.js";
import type { UndoContext } from "./compensate.js";
import { withPlanView } from "./plan-view.js";
import { governed } from "./route-call.js";
import { TurnClaims } from "./turn.js";
import { writePlanTool } from "./write-plan.js";

const SYSTEM_PROMPT =
  "Plan with write_plan before calling other tools: one step per tool call, with the steps each depends on " +
  "and the assumptions it rests on. The current plan is shown to you every turn; follow it, and revise it with " +
  "write_plan when told a step failed or an assumption is false.";

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
