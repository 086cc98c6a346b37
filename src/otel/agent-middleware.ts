/**
 * The plan middleware with its telemetry: its tool and model call wrappers and `afterAgent` run
 * inside the thread's traced run (otel/agent-runs.ts); the agent's own model calls — where an agent
 * writes and revises its plan — are `chat` spans of the run.
 */
import type { Span } from "@opentelemetry/api";
import { loadedOtel, telemetryScope } from "./api.js";
import { agentRun, endingAgentRun, inAgentRun } from "./agent-runs.js";
import { ATTRS, SPANS } from "./names.js";

type Request = { runtime?: unknown };
type Wrap = (request: Request, handler: (request: Request) => unknown) => unknown;
type Hook = (state: unknown, runtime: unknown) => unknown;

/** A hook as createMiddleware takes it: the function, or the function with its options. */
type HookSpec = Hook | { hook: Hook; [option: string]: unknown };

interface Hooks {
  wrapToolCall?: Wrap;
  wrapModelCall?: Wrap;
  beforeModel?: HookSpec;
  afterAgent?: Hook;
}

/** `middleware` with its hooks traced; unchanged when it has none of them. */
export function tracedMiddleware<M extends object>(middleware: M): M {
  const { wrapToolCall, wrapModelCall, beforeModel, afterAgent } = middleware as Hooks;
  const traced: Hooks = {
    ...(wrapToolCall && {
      wrapToolCall: (request, handler) => inAgentRun(request.runtime, () => wrapToolCall(request, handler)),
    }),
    ...(wrapModelCall && {
      wrapModelCall: (request, handler) =>
        inAgentRun(request.runtime, () =>
          wrapModelCall(request, (inner) => modelSpan(request.runtime, () => handler(inner))),
        ),
    }),
    // A person is asked before a model call too (a held call, a plan to review).
    ...(beforeModel && { beforeModel: inRun(beforeModel) }),
    ...(afterAgent && {
      afterAgent: (state, runtime) => endingAgentRun(runtime, () => afterAgent(state, runtime)),
    }),
  };
  return { ...middleware, ...traced };
}

function inRun(spec: HookSpec): HookSpec {
  const hook = typeof spec === "function" ? spec : spec.hook;
  const traced: Hook = (state, runtime) => inAgentRun(runtime, () => hook(state, runtime));
  return typeof spec === "function" ? traced : { ...spec, hook: traced };
}

/** The agent's model call as a span of its run, with the tokens its answer reports. */
async function modelSpan(runtime: unknown, call: () => unknown): Promise<unknown> {
  const api = loadedOtel();
  const run = api && agentRun(runtime);
  const tracer = run && telemetryScope(api)?.tracer;
  if (!api || !run || !tracer) return call();
  const span = tracer.startSpan(
    `${SPANS.model} agent`,
    { attributes: { [ATTRS.operation]: SPANS.model, [ATTRS.purpose]: "agent" } },
    run.contextFor(undefined),
  );
  try {
    const answer = await call();
    usage(span, answer);
    return answer;
  } catch (error) {
    span.setAttribute(ATTRS.errorType, (error as { name?: string } | null)?.name ?? "Error");
    span.setStatus({ code: api.SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}

type Answer = {
  usage_metadata?: { input_tokens?: number; output_tokens?: number };
  response_metadata?: { model_name?: unknown; model?: unknown };
};

function usage(span: Span, answer: unknown): void {
  const message = answer as Answer | undefined;
  const model = message?.response_metadata?.model_name ?? message?.response_metadata?.model;
  if (typeof model === "string") {
    span.updateName(`${SPANS.model} ${model}`);
    span.setAttribute(ATTRS.requestModel, model);
  }
  span.setAttribute(ATTRS.inputTokens, message?.usage_metadata?.input_tokens ?? 0);
  span.setAttribute(ATTRS.outputTokens, message?.usage_metadata?.output_tokens ?? 0);
}
