import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it, vi } from "vitest";
import { planMiddleware } from "../../src/middleware/index.js";
import { resolveAgentOptions } from "../../src/middleware/agent-options.js";
import { TransientError } from "../../src/errors.js";
import { scriptedAgentModel } from "../helpers/agent-model.js";
import { countedTool, ledger } from "../helpers/agent-tools.js";

const ratePlan = {
  steps: [
    { id: "rate", goal: "Fetch the rate", tool: "fetch_rate", produces: ["rate"] },
    { id: "total", goal: "Convert", tool: "convert", dependsOn: ["rate"], inputs: ["rate"], produces: ["total"] },
  ],
};

describe("planMiddleware: a run stopped during a retry's backoff", () => {
  it("ends the attempt at the stop without calling the tool again, and invoke(null) resumes the call", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "fetch_rate", (n) => {
        if (n === 1) throw new TransientError("rate service busy");
        return { rate: 1.08 };
      }),
      countedTool(l, "convert", (_n, args) => ({ total: 100 * Number(args.rate) })),
    ];
    const model = scriptedAgentModel([
      [{ name: "write_plan", args: ratePlan }],
      [{ name: "fetch_rate", args: { currency: "EUR" } }],
      [{ name: "convert", args: {} }],
      "108 USD",
    ]);
    const stop = new AbortController();
    const sleeps: { ms: number; signalled: boolean }[] = [];
    let resumed = false;
    // The first run is stopped while its retry waits; the sleep returns only when its signal aborts.
    const sleep = (ms: number, signal?: AbortSignal) => {
      sleeps.push({ ms, signalled: signal !== undefined });
      if (resumed) return Promise.resolve();
      stop.abort(new Error("stopped by the user"));
      if (!signal) return Promise.resolve();
      return new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener("abort", () => resolve(), { once: true });
      });
    };
    const agent = createAgent({
      model,
      tools,
      middleware: [planMiddleware({ sleep, now: () => 0 })],
      checkpointer: new MemorySaver(),
    });
    const thread = { configurable: { thread_id: "stopped" } };
    const start = { messages: [{ role: "user", content: "Convert 100 EUR" }] };
    await expect(agent.invoke(start, { ...thread, signal: stop.signal })).rejects.toThrow("stopped by the user");
    // The backoff saw the run's stop and the attempt ended there: the tool was not called again.
    expect(sleeps).toEqual([{ ms: 200, signalled: true }]);
    expect(l.calls).toEqual({ fetch_rate: 1 });
    const held = await agent.graph.getState(thread);
    const values = held.values as { steps: unknown; decisions: unknown };
    expect(held.next).toEqual(["tools"]);
    expect(values.steps).toEqual({});
    expect(values.decisions).toEqual([]);

    resumed = true;
    const out = await agent.invoke(null, thread);
    expect(out.status).toBe("completed");
    expect(l.calls).toEqual({ fetch_rate: 2, convert: 1 });
    expect(out.steps.rate).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(out.facts.total!.value).toBe(108);
    expect(out.decisions).toEqual([]);
  });
});

describe("planMiddleware's default sleep", () => {
  it("ends at the run's stop, not at its timer", async () => {
    vi.useFakeTimers();
    try {
      const stop = new AbortController();
      let ended = false;
      const waiting = resolveAgentOptions()
        .clock.sleep(60_000, stop.signal)
        .then(() => (ended = true));
      await vi.advanceTimersByTimeAsync(1_000);
      expect(ended).toBe(false);
      stop.abort();
      await waiting;
      expect(ended).toBe(true);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
