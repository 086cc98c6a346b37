/**
 * The one fake chat model of the test suite: LangChain's FakeListChatModel, plus what the
 * planner tests need to see — scripted errors, the messages each call received, and token
 * usage reported the way real chat models report it (`usage_metadata`) — and `instantBackoff`,
 * so that LangChain's retry waits cost no time.
 */
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { vi } from "vitest";

export type ScriptEntry = string | object | Error;

export class ScriptedChatModel extends FakeListChatModel {
  readonly received: BaseMessage[][] = [];
  private readonly script: ScriptEntry[];
  private readonly usage: { input: number; output: number };
  readonly model: string;

  constructor(script: ScriptEntry[], options: { model?: string; usage?: { input: number; output: number } } = {}) {
    super({ responses: [""] });
    this.script = script;
    this.model = options.model ?? "fake-planner-1";
    this.usage = options.usage ?? { input: 1000, output: 200 };
  }

  override async _generate(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    this.received.push(messages);
    const entry = this.script[Math.min(this.received.length - 1, this.script.length - 1)];
    if (entry instanceof Error) throw entry;
    this.responses = [typeof entry === "string" ? entry : JSON.stringify(entry)];
    this.i = 0;
    const result = await super._generate(messages, options, runManager);
    const message = result.generations[0]!.message as BaseMessage & { usage_metadata?: unknown };
    message.usage_metadata = {
      input_tokens: this.usage.input,
      output_tokens: this.usage.output,
      total_tokens: this.usage.input + this.usage.output,
    };
    message.response_metadata = { model_name: this.model };
    return result;
  }
}

/**
 * LangChain's retries (`Runnable.withRetry`) wait in p-retry, with `setTimeout`: exponential from
 * 1 s, with jitter. Tests play those waits at once and record them, with the jitter pinned
 * (`Math.random` → 0) so the delays are exact. Only p-retry's timers are touched: an HTTP
 * client's own timers (undici's keep-alive, a request timeout) keep their real delay.
 */
export function instantBackoff(): { delays: number[]; restore: () => void } {
  const realSetTimeout = globalThis.setTimeout;
  const delays: number[] = [];
  const instant = (fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    // The frame that called setTimeout, past this wrapper and vitest's spy.
    const frames = new Error().stack?.split("\n").slice(1) ?? [];
    const caller = frames.find((f) => !f.includes("fake-model.ts") && !f.includes("@vitest/spy"));
    if (!caller?.includes("/p-retry/")) return realSetTimeout(fn, ms, ...args);
    delays.push(ms ?? 0);
    return realSetTimeout(fn, 0, ...args);
  };
  const timers = vi.spyOn(globalThis, "setTimeout").mockImplementation(instant as typeof setTimeout);
  const random = vi.spyOn(Math, "random").mockReturnValue(0);
  return {
    delays,
    restore: () => {
      timers.mockRestore();
      random.mockRestore();
    },
  };
}
