/**
 * The agent face's runs: `createAgent` gives middleware no hook around a run, so a run's telemetry
 * opens at the first hook of a thread that has none open, and ends after `afterAgent`, at an
 * interrupt (a wait for a person) or at an error leaving a hook (docs/decisions/0052-opentelemetry.md).
 * The events are the ones the middleware sends through `writerOf` (middleware/agent-events.ts).
 */
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { isGraphBubbleUp, isGraphInterrupt } from "@langchain/langgraph";
import { loadOtel, telemetryScope } from "./api.js";
import { RunTelemetry, type RunEnd } from "./run-telemetry.js";

/** Open agent runs, by thread: a thread runs one agent run at a time. */
const open = new Map<string, RunTelemetry>();

type Runtime = { configurable?: Record<string, unknown> } | undefined;

/** The thread a hook's runtime belongs to, named as the middleware names it. */
export function threadOf(runtime: unknown): string {
  return String((runtime as Runtime)?.configurable?.thread_id ?? "agent");
}

/** The open run of a hook's thread, if it is traced. */
export function agentRun(runtime: unknown): RunTelemetry | undefined {
  return open.size === 0 ? undefined : open.get(threadOf(runtime));
}

/** The open run of the thread the current LangChain call runs in (a model call inside a hook). */
export function currentAgentRun(): RunTelemetry | undefined {
  if (open.size === 0) return undefined;
  const config = AsyncLocalStorageProviderSingleton.getRunnableConfig() as Runtime;
  return open.get(threadOf(config));
}

/** Opens the thread's run if it has none, when telemetry is on. */
async function opened(runtime: unknown): Promise<RunTelemetry | undefined> {
  const thread = threadOf(runtime);
  const known = open.get(thread);
  if (known) return known;
  const api = await loadOtel();
  const scope = api && telemetryScope(api);
  if (!scope) return undefined;
  const config = AsyncLocalStorageProviderSingleton.getRunnableConfig() as { metadata?: Record<string, unknown> };
  const name = config?.metadata?.lc_agent_name;
  const telemetry = new RunTelemetry(scope, {
    face: "agent",
    name: typeof name === "string" ? name : "agent",
    threadId: thread,
  });
  open.set(thread, telemetry);
  return telemetry;
}

function close(runtime: unknown, how: RunEnd): void {
  const thread = threadOf(runtime);
  const telemetry = open.get(thread);
  if (!telemetry) return;
  open.delete(thread);
  telemetry.end(how);
}

/** Runs a hook inside the thread's traced run; an interrupt or an error leaving it ends the run. */
export async function inAgentRun<T>(runtime: unknown, hook: () => T | Promise<T>): Promise<T> {
  await opened(runtime);
  try {
    return await hook();
  } catch (error) {
    // A command for a parent graph is no end of the run; an interrupt is a wait for a person.
    if (isGraphBubbleUp(error) && !isGraphInterrupt(error)) throw error;
    const stopped = (error as { name?: unknown } | null)?.name === "AbortError";
    close(
      runtime,
      isGraphInterrupt(error) ? { kind: "waiting" } : stopped ? { kind: "stopped" } : { kind: "failed", error },
    );
    throw error;
  }
}

/** `afterAgent` inside the thread's run, which ends with it. */
export async function endingAgentRun<T>(runtime: unknown, hook: () => T | Promise<T>): Promise<T> {
  const result = await inAgentRun(runtime, hook);
  close(runtime, { kind: "returned" });
  return result;
}
