/**
 * One tool call of the graph, as LangChain wants it: the run's callbacks, the step's trace tags and
 * metadata, and what the tool finds in `config.configurable` (the step, the attempt, the idempotency
 * key). `toolConfig` builds that config for the one attempt driver's graph port
 * (nodes/executor/start-attempt.ts); `callTool` makes a call under the driver's one deadline
 * (runtime/run-attempt.ts) for the graph's other callers (a watcher, an undo): past the step's timeout
 * its signal aborts and it throws `StepTimeout`; the caller's `stop` aborts it too
 * (docs/decisions/0028-a-stopped-run-keeps-its-results.md).
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { TRACE_TAGS } from "../contracts/trace.js";
import { callWithin, StepTimeout } from "./run-attempt.js";

export { StepTimeout } from "./run-attempt.js";

/** What a step attempt calls: a LangChain tool, or an agent step's call (nodes/executor/agent-attempt.ts). */
export interface Invocable {
  invoke(args: Record<string, unknown>, config: RunnableConfig): Promise<unknown>;
}

export interface ToolCall {
  tool: StructuredToolInterface | Invocable;
  args: Record<string, unknown>;
  timeoutMs: number;
  /** What the tool finds in `config.configurable`, beside the run's own configurable. */
  configurable: { stepId: string; planVersion: number; attempt: number; idempotencyKey?: string };
}

/** The config a step's tool is called with: the run's callbacks, so a tracer shows the call below the node, named by its step. */
export function toolConfig(
  call: Omit<ToolCall, "tool" | "args" | "timeoutMs">,
  config: LangGraphRunnableConfig,
  signal: AbortSignal,
) {
  const { stepId, attempt, planVersion } = call.configurable;
  return {
    callbacks: config.callbacks,
    metadata: { stepId, attempt, planVersion },
    tags: [TRACE_TAGS.step],
    signal,
    configurable: { ...config.configurable, ...call.configurable },
  };
}

export async function callTool(call: ToolCall, config: LangGraphRunnableConfig, stop?: AbortSignal): Promise<unknown> {
  const outcome = await callWithin(call.timeoutMs, stop, async (signal) => ({
    ok: true,
    output: await (call.tool as Invocable).invoke(call.args, toolConfig(call, config, signal)),
  }));
  if (outcome.ok) return outcome.output;
  throw new StepTimeout(call.timeoutMs);
}
