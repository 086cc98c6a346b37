/**
 * The test suite's fake chat model (`ScriptedChatModel`, in scripted-chat-model.ts so benchmarks
 * can use it) and `instantBackoff`, so that LangChain's retry waits cost no time.
 */
import { vi } from "vitest";

export { ScriptedChatModel, type ScriptEntry } from "./scripted-chat-model.js";

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
