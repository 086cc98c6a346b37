/**
 * One tool call with a timeout. The tool's signal aborts when the step's timeout passes, so a
 * hanging tool cannot stall a run, and when the caller stops the run (`stop`, the caller's own
 * signal; docs/decisions/0028-a-stopped-run-keeps-its-results.md).
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { TRACE_TAGS } from "../contracts/trace.js";

export class StepTimeout extends Error {
  constructor(ms: number) {
    super(`step timed out after ${ms} ms`);
    this.name = "StepTimeout";
  }
}

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

export async function callTool(call: ToolCall, config: LangGraphRunnableConfig, stop?: AbortSignal): Promise<unknown> {
  const controller = new AbortController();
  // A listener rather than `AbortSignal.any`: merging signals per call cost measurable time per step.
  const stopped = () => controller.abort(stop?.reason);
  if (stop?.aborted) stopped();
  else stop?.addEventListener("abort", stopped, { once: true });
  const { stepId, attempt, planVersion } = call.configurable;
  const toolConfig = {
    // The run's callbacks, so a tracer shows the call below the node, named by its step.
    callbacks: config.callbacks,
    metadata: { stepId, attempt, planVersion },
    tags: [TRACE_TAGS.step],
    signal: controller.signal,
    configurable: { ...config.configurable, ...call.configurable },
  };
  const pending = (call.tool as Invocable).invoke(call.args, toolConfig);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new StepTimeout(call.timeoutMs));
    }, call.timeoutMs);
  });
  try {
    return await Promise.race([pending, timeout]);
  } finally {
    clearTimeout(timer);
    stop?.removeEventListener("abort", stopped);
    pending.catch(() => undefined);
  }
}
