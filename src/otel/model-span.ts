/**
 * A planner's, classifier's or reviewer's model call as a `chat <model>` span below what it serves:
 * the attempt its metadata names, else the run's plan version, else the run (docs/decisions/0052-opentelemetry.md).
 * Tokens and model come from the usage reports the call makes anyway; one span covers its retries.
 */
import type { Context, Span } from "@opentelemetry/api";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import type { UsageEntry } from "../contracts/usage.js";
import { observerOf } from "../contracts/run-events.js";
import { loadedOtel, telemetryScope, type OtelApi } from "./api.js";
import { currentAgentRun } from "./agent-runs.js";
import { ATTRS, SPANS } from "./names.js";
import { RunTelemetry } from "./run-telemetry.js";

type Usage = Omit<UsageEntry, "at" | "purpose">;

interface Traced {
  modelName?: string;
  trace?: { metadata?: Record<string, unknown> };
  report: (usage: Usage) => void;
}

/** Runs `call` (given its `report`) inside a model span, when a tracer provider is registered. */
export async function withModelSpan<C extends Traced, R extends { ok: boolean }>(
  traced: C,
  call: (traced: C) => Promise<R>,
): Promise<R> {
  const api = loadedOtel();
  const tracer = api && telemetryScope(api)?.tracer;
  if (!api || !tracer) return call(traced);
  const metadata = traced.trace?.metadata ?? {};
  const stepId = typeof metadata.stepId === "string" ? metadata.stepId : undefined;
  const parent: Context = runOf()?.contextFor(stepId) ?? api.context.active();
  const purpose = typeof metadata.purpose === "string" ? metadata.purpose : undefined;
  const span = tracer.startSpan(
    `${SPANS.model} ${traced.modelName ?? "model"}`,
    {
      attributes: {
        [ATTRS.operation]: SPANS.model,
        ...(traced.modelName ? { [ATTRS.requestModel]: traced.modelName } : {}),
        ...(purpose ? { [ATTRS.purpose]: purpose } : {}),
      },
    },
    parent,
  );
  const tokens = { input: 0, output: 0 };
  const report = (usage: Usage) => {
    tokens.input += usage.inputTokens;
    tokens.output += usage.outputTokens;
    if (usage.model) {
      span.updateName(`${SPANS.model} ${usage.model}`);
      span.setAttribute(ATTRS.requestModel, usage.model);
    }
    traced.report(usage);
  };
  try {
    const result = await call({ ...traced, report });
    ended(api, span, tokens, result);
    return result;
  } finally {
    span.end();
  }
}

function ended(api: OtelApi, span: Span, tokens: { input: number; output: number }, result: { ok: boolean }): void {
  span.setAttribute(ATTRS.inputTokens, tokens.input);
  span.setAttribute(ATTRS.outputTokens, tokens.output);
  if (result.ok) return;
  const failure = (result as { failure?: unknown }).failure;
  const message = (result as { message?: unknown }).message;
  span.setAttribute(ATTRS.errorType, typeof failure === "string" ? failure : "error");
  span.setStatus({ code: api.SpanStatusCode.ERROR, ...(typeof message === "string" ? { message } : {}) });
}

/** The traced run the current call belongs to: the graph run of the node making it, or the agent's. */
function runOf(): RunTelemetry | undefined {
  const observer = observerOf(AsyncLocalStorageProviderSingleton.getRunnableConfig() as never);
  return observer instanceof RunTelemetry ? observer : currentAgentRun();
}
