/**
 * One model call with what every planner call needs: retries with backoff for rate limits,
 * timeouts and 5xx (auth and quota errors are not retried), latency, token usage from the
 * model's own `usage_metadata`, cost from a price table, and an error id on failures.
 */
import { randomUUID } from "node:crypto";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatGeneration, LLMResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";
import { PlanManagerError } from "../errors.js";
import type { UsageEntry } from "../contracts/usage.js";
import { backoffDelay } from "../policy/backoff.js";
import { errorInfo } from "../policy/deviation.js";
import { classifyEvidence } from "../policy/evidence-rules.js";

/** USD per million tokens, by model name. */
export type PriceTable = Record<string, { input: number; output: number }>;

export interface ModelCallSettings {
  /** Retries after the first call for transient model errors. Default 3. */
  maxRetries?: number;
  /** Backoff between retries. Default exponential from 500 ms up to 8 s. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Injectable time, so tests never wait. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  prices?: PriceTable;
}

export type UsageReport = Omit<UsageEntry, "at" | "purpose">;

class UsageCollector extends BaseCallbackHandler {
  name = "langgraph-replan-usage";
  inputTokens = 0;
  outputTokens = 0;
  model?: string;
  override handleLLMEnd(output: LLMResult): void {
    for (const generation of output.generations.flat()) {
      const message = (generation as ChatGeneration).message as (BaseMessage & { usage_metadata?: { input_tokens: number; output_tokens: number } }) | undefined;
      const usage = message?.usage_metadata;
      if (usage) {
        this.inputTokens += usage.input_tokens;
        this.outputTokens += usage.output_tokens;
      }
      const meta = (message?.response_metadata ?? {}) as { model_name?: unknown; model?: unknown };
      const name = meta.model_name ?? meta.model;
      if (typeof name === "string") this.model = name;
    }
    const tokenUsage = output.llmOutput?.tokenUsage as { promptTokens?: number; completionTokens?: number } | undefined;
    if (this.inputTokens === 0 && this.outputTokens === 0 && tokenUsage) {
      this.inputTokens = tokenUsage.promptTokens ?? 0;
      this.outputTokens = tokenUsage.completionTokens ?? 0;
    }
  }
}

function isRetryable(error: unknown): boolean {
  const info = errorInfo(error);
  if (info.code === "insufficient_quota" || /quota/i.test(info.message)) return false;
  if (info.status === 401 || info.status === 403) return false;
  if (classifyEvidence({ kind: "error", attempt: 1, message: info.message, error: info }).failureClass === "transient") return true;
  return info.status === undefined && /timeout|timed out|connection/i.test(`${info.name} ${info.message}`);
}

export function costOf(prices: PriceTable | undefined, model: string | undefined, inputTokens: number, outputTokens: number): number {
  const price = model ? prices?.[model] : undefined;
  return price ? (inputTokens * price.input + outputTokens * price.output) / 1_000_000 : 0;
}

/** Invokes `runnable` with retries; every call, failed or not, is reported through `report`. */
export async function callModel<T>(runnable: Runnable<BaseMessage[], T>, messages: BaseMessage[], modelName: string | undefined, settings: ModelCallSettings, report: (u: UsageReport) => void): Promise<T> {
  const now = settings.now ?? Date.now;
  const sleep = settings.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const maxRetries = settings.maxRetries ?? 3;
  const policy = { maxAttempts: maxRetries + 1, backoff: "exponential" as const, initialDelayMs: settings.initialDelayMs ?? 500, maxDelayMs: settings.maxDelayMs ?? 8_000 };
  for (let attempt = 1; ; attempt++) {
    const collector = new UsageCollector();
    const started = now();
    try {
      const value = await runnable.invoke(messages, { callbacks: [collector] });
      const model = collector.model ?? modelName;
      report({ ...(model ? { model } : {}), inputTokens: collector.inputTokens, outputTokens: collector.outputTokens, latencyMs: now() - started, cost: costOf(settings.prices, model, collector.inputTokens, collector.outputTokens) });
      return value;
    } catch (error) {
      const errorId = `err_${randomUUID().slice(0, 8)}`;
      const info = errorInfo(error);
      report({ ...(modelName ? { model: modelName } : {}), inputTokens: collector.inputTokens, outputTokens: collector.outputTokens, latencyMs: now() - started, cost: 0, errorId });
      if (!isRetryable(error)) {
        const kind = info.status === 401 || info.status === 403 ? "authentication failed" : info.code === "insufficient_quota" || /quota/i.test(info.message) ? "quota exhausted" : "failed";
        throw new PlanManagerError("planner_failed", `model call ${kind}${info.status ? ` (${info.status})` : ""}: ${info.message} [${errorId}]`, { cause: error });
      }
      if (attempt > maxRetries) {
        throw new PlanManagerError("planner_failed", `model call failed after ${attempt} attempts: ${info.message} [${errorId}]`, { cause: error });
      }
      await sleep(backoffDelay(policy, attempt, info.retryAfterMs));
    }
  }
}
