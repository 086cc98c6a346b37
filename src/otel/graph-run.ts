/**
 * A plan manager run with its telemetry: the run's events reach a `RunTelemetry` through the run's
 * config (runtime/events.ts `withObserver`), and the run span ends however the run does — its last
 * node returned, it paused at a question (a wait for a person), its caller stopped it, or it threw.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { withObserver } from "../contracts/run-events.js";
import { loadOtel, telemetryScope } from "./api.js";
import { RunTelemetry, type RunEnd } from "./run-telemetry.js";

type Run = (input: unknown, config: Partial<RunnableConfig> | undefined) => AsyncGenerator<unknown>;

/** `run`, traced when `@opentelemetry/api` is installed and a provider is registered; else `run` itself. */
export function tracedRun(run: Run, name: string | undefined, signal: AbortSignal | undefined): Run {
  return async function* traced(input, config) {
    const api = await loadOtel();
    const scope = api && telemetryScope(api);
    if (!scope) return yield* run(input, config);
    const threadId = config?.configurable?.thread_id;
    const goal = (input as { goal?: unknown } | null)?.goal;
    const telemetry = new RunTelemetry(scope, {
      face: "graph",
      name: name ?? "LangGraph",
      ...(typeof threadId === "string" ? { threadId } : {}),
      ...(typeof goal === "string" ? { goal } : {}),
    });
    let how: RunEnd = { kind: "returned" };
    try {
      yield* run(input, withObserver(config, telemetry));
      if (signal?.aborted) how = { kind: "stopped" };
    } catch (error) {
      how = signal?.aborted ? { kind: "stopped" } : { kind: "failed", error };
      throw error;
    } finally {
      telemetry.end(how);
    }
  };
}
