/**
 * Usage of the model calls an agent step makes: one entry per call, failed or not, read from
 * LangChain's callbacks, so that calls made deep inside an agent graph are counted too.
 */
import { randomUUID } from "node:crypto";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { LLMResult } from "@langchain/core/outputs";
import type { UsageEntry } from "../contracts/usage.js";
import type { ModelTier } from "../plan/schema/step.js";
import { costOf, resultUsage, type PriceTable } from "../planners/model-call.js";

export type { PriceTable } from "../planners/model-call.js";
export { resolvePrices } from "../planners/model-call.js";

export interface MeterContext {
  stepId: string;
  attempt: number;
  tier?: ModelTier;
  /** Model name when a call's answer does not name one. */
  modelName?: string;
  prices?: PriceTable;
  now: () => number;
}

export class StepUsageMeter extends BaseCallbackHandler {
  name = "langgraph-replan-step-usage";
  readonly entries: UsageEntry[] = [];
  private readonly started = new Map<string, number>();

  constructor(private readonly ctx: MeterContext) {
    // Awaited: the entries must all be in when the attempt ends (background callbacks could land later).
    super({ _awaitHandler: true });
  }

  override handleChatModelStart(_llm: unknown, _messages: unknown, runId: string): void {
    this.started.set(runId, this.ctx.now());
  }

  override handleLLMStart(_llm: unknown, _prompts: unknown, runId: string): void {
    this.started.set(runId, this.ctx.now());
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    const usage = resultUsage(output);
    this.add(runId, usage.model, usage.input, usage.output);
  }

  override handleLLMError(_error: unknown, runId: string): void {
    this.add(runId, undefined, 0, 0, `err_${randomUUID().slice(0, 8)}`);
  }

  private add(runId: string, named: string | undefined, input: number, output: number, errorId?: string): void {
    const { ctx } = this;
    const now = ctx.now();
    const model = named ?? ctx.modelName;
    this.entries.push({
      purpose: "step",
      stepId: ctx.stepId,
      attempt: ctx.attempt,
      ...(ctx.tier ? { tier: ctx.tier } : {}),
      ...(model ? { model } : {}),
      inputTokens: input,
      outputTokens: output,
      latencyMs: now - (this.started.get(runId) ?? now),
      cost: costOf(ctx.prices, model, input, output),
      at: new Date(now).toISOString(),
      ...(errorId ? { errorId } : {}),
    });
    this.started.delete(runId);
  }
}
