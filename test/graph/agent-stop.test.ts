import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createAgent } from "langchain";
import { describe, expect, it, vi } from "vitest";
import { planMiddleware } from "../../src/middleware/index.js";
import { resolveAgentOptions } from "../../src/middleware/agent-options.js";
import { TransientError } from "../../src/errors.js";
import { scriptedAgentModel, type Turn } from "../helpers/agent-model.js";
import { countedTool, ledger } from "../helpers/agent-tools.js";
import { stoppingSleep } from "../helpers/stopping-sleep.js";

const ratePlan = {
  steps: [
    { id: "rate", goal: "Fetch the rate", tool: "fetch_rate", produces: ["rate"], cost: 2 },
    { id: "total", goal: "Convert", tool: "convert", dependsOn: ["rate"], inputs: ["rate"], produces: ["total"] },
  ],
};

describe("planMiddleware: a run stopped during a retry's backoff", () => {
  it("keeps the failed attempt, its charge and the retry decision: invoke(null) goes on at attempt 2", async () => {
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
    const { sleep, sleeps, next } = stoppingSleep(l);
    const agent = createAgent({
      model,
      tools,
      middleware: [planMiddleware({ sleep, now: () => 0 })],
      checkpointer: new MemorySaver(),
    });
    const thread = { configurable: { thread_id: "stopped" } };
    const start = { messages: [{ role: "user", content: "Convert 100 EUR" }] };
    const sent: string[] = [];
    const watch = async (input: typeof start | null, signal?: AbortSignal) => {
      const config = { ...thread, streamMode: "custom" as const, ...(signal ? { signal } : {}) };
      for await (const e of await agent.stream(input, config))
        if ((e as { type?: string }).type === "decision")
          sent.push((e as { decision: { rule: string } }).decision.rule);
    };
    await expect(watch(start, next())).rejects.toThrow("stopped by the user");
    // The backoff saw the run's stop and the attempt ended there: the tool was not called again.
    expect(sleeps).toEqual([{ ms: 200, signalled: true }]);
    expect(l.calls).toEqual({ fetch_rate: 1 });
    expect((await agent.graph.getState(thread)).next).toEqual(["tools"]);
    // The stop ended the stream before the decision announced just before it was delivered.
    expect(sent).toEqual([]);

    await watch(null);
    const out = (await agent.graph.getState(thread)).values as Awaited<ReturnType<typeof agent.invoke>>;
    expect(out.status).toBe("completed");
    // The kept decision lands with the resumed call's update, and is sent then.
    expect(sent).toEqual(["transient.retry"]);
    // The call goes on after the backoff the retry scheduled, as the graph's executor waits it.
    expect(sleeps).toEqual([
      { ms: 200, signalled: true },
      { ms: 200, signalled: true },
    ]);
    expect(l.calls).toEqual({ fetch_rate: 2, convert: 1 });
    expect(out.steps.rate).toMatchObject({ status: "succeeded", attempts: 2, cost: 4 });
    expect(out.decisions.map((d) => [d.rule, d.stepId, d.attempt, d.action])).toEqual([
      ["transient.retry", "rate", 1, "retry"],
    ]);
    expect(out.budget?.spent).toBe(4);
    expect(out.facts.total!.value).toBe(108);
  });

  it("two calls of one step in a model turn, one stopped in its backoff: only that call carries its attempt on", async () => {
    const l = ledger();
    const fetch = countedTool(l, "fetch_rate", (n, args) => {
      if (args.currency === "EUR" && n === 1) throw new TransientError("rate service busy");
      return { rate: args.currency === "EUR" ? 1.08 : 1 };
    });
    const model = scriptedAgentModel([
      [{ name: "write_plan", args: { steps: [ratePlan.steps[0]] } }],
      [
        { name: "fetch_rate", args: { currency: "EUR" } },
        { name: "fetch_rate", args: { currency: "USD" } },
      ],
      "done",
    ]);
    const { sleep, next } = stoppingSleep(l);
    const agent = createAgent({
      model,
      tools: [fetch],
      middleware: [planMiddleware({ sleep, now: () => 0 })],
      checkpointer: new MemorySaver(),
    });
    const thread = { configurable: { thread_id: "two-calls" } };
    const start = { messages: [{ role: "user", content: "Rates" }] };
    await expect(agent.invoke(start, { ...thread, signal: next() })).rejects.toThrow("stopped by the user");
    await agent.invoke(null, thread);
    const out = (await agent.graph.getState(thread)).values as Awaited<ReturnType<typeof agent.invoke>>;
    // One retry happened, so one retry decision: the USD call does not take the EUR call's stopped drive.
    expect(out.decisions.filter((d) => d.rule === "transient.retry").map((d) => [d.stepId, d.attempt])).toEqual([
      ["rate", 1],
    ]);
  });

  it("N stop+resume cycles never call the tool more than retry.maxAttempts times", async () => {
    const l = ledger();
    const busy = countedTool(l, "fetch_rate", () => {
      throw new TransientError("rate service busy");
    });
    const plan = { steps: [{ ...ratePlan.steps[0]!, retry: { maxAttempts: 3 } }] };
    const model = scriptedAgentModel([
      [{ name: "write_plan", args: plan }],
      [{ name: "fetch_rate", args: {} }],
      "the rate service is down",
    ]);
    const { sleep, next } = stoppingSleep(l);
    const agent = createAgent({
      model,
      tools: [busy],
      middleware: [planMiddleware({ sleep, now: () => 0 })],
      checkpointer: new MemorySaver(),
    });
    const thread = { configurable: { thread_id: "cycles" } };
    const start = { messages: [{ role: "user", content: "Fetch the rate" }] };
    let input: typeof start | null = start;
    const ends: string[] = [];
    for (let cycle = 0; cycle < 5; cycle += 1) {
      const ran = await agent.invoke(input, { ...thread, signal: next() }).then(
        (out) => `ended ${out.status}`,
        (e: unknown) => (e as Error).message,
      );
      ends.push(ran);
      input = null;
    }
    expect(l.calls).toEqual({ fetch_rate: 3 });
    // Two runs stopped in a retry's backoff; the third makes attempt 3, and the ladder asks a person.
    expect(ends).toEqual([
      "stopped by the user",
      "stopped by the user",
      "ended awaiting_human",
      "ended awaiting_human",
      "ended awaiting_human",
    ]);
    const values = (await agent.graph.getState(thread)).values as {
      steps: Record<string, { attempts: number; cost?: number }>;
      decisions: { rule: string; attempt: number }[];
      budget?: { spent: number };
    };
    expect(values.steps.rate).toMatchObject({ status: "failed", attempts: 3, cost: 6 });
    expect(values.decisions.map((d) => [d.rule, d.attempt])).toEqual([
      ["transient.retry", 1],
      ["transient.retry", 2],
      ["exhausted.escalate", 3],
    ]);
    expect(values.budget?.spent).toBe(6);
  });

  it("a stop+resume cycle does not spend past policy.budget.maxCost", async () => {
    const l = ledger();
    const busy = countedTool(l, "fetch_rate", () => {
      throw new TransientError("rate service busy");
    });
    const plan = { steps: [{ ...ratePlan.steps[0]!, retry: { maxAttempts: 5 } }] };
    const model = scriptedAgentModel([
      [{ name: "write_plan", args: plan }],
      [{ name: "fetch_rate", args: {} }],
      "over budget",
    ]);
    const { sleep, next } = stoppingSleep(l);
    const agent = createAgent({
      model,
      tools: [busy],
      middleware: [planMiddleware({ sleep, now: () => 0, policy: { budget: { maxCost: 5 } } })],
      checkpointer: new MemorySaver(),
    });
    const thread = { configurable: { thread_id: "budget" } };
    let input: { messages: { role: string; content: string }[] } | null = {
      messages: [{ role: "user", content: "Fetch the rate" }],
    };
    for (let cycle = 0; cycle < 4; cycle += 1) {
      await agent.invoke(input, { ...thread, signal: next() }).catch(() => undefined);
      input = null;
    }
    expect(l.calls).toEqual({ fetch_rate: 2 });
    const values = (await agent.graph.getState(thread)).values as {
      decisions: { rule: string }[];
      budget?: { spent: number };
    };
    expect(values.budget?.spent).toBe(4);
    expect(values.decisions.map((d) => d.rule)).toEqual([
      "transient.retry",
      "transient.retry",
      "budget.replan-cheaper",
    ]);
  });
});

describe("planMiddleware: a stopped backoff on a SQLite checkpointer", () => {
  it("a new process resuming with invoke(null) goes on at attempt 2: the stopped drive is kept beside the checkpoints", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agent-stop-"));
    const file = join(dir, "run.sqlite");
    const l = ledger();
    const tools = () => [
      countedTool(l, "fetch_rate", (n) => {
        if (n === 1) throw new TransientError("rate service busy");
        return { rate: 1.08 };
      }),
    ];
    const plan = { steps: [ratePlan.steps[0]!] };
    const { sleep, next } = stoppingSleep(l);
    const agentOn = (saver: SqliteSaver, turns: Turn[]) =>
      createAgent({
        model: scriptedAgentModel(turns),
        tools: tools(),
        middleware: [planMiddleware({ sleep, now: () => 0 })],
        checkpointer: saver,
      });
    const thread = { configurable: { thread_id: "restarted" } };
    const first = SqliteSaver.fromConnString(file);
    const second = SqliteSaver.fromConnString(file);
    try {
      const start = { messages: [{ role: "user", content: "Fetch the rate" }] };
      const turns: Turn[] = [[{ name: "write_plan", args: plan }], [{ name: "fetch_rate", args: {} }], "never"];
      await expect(agentOn(first, turns).invoke(start, { ...thread, signal: next() })).rejects.toThrow("stopped by");
      first.db.close();
      // A new process: a new saver on the file, a new agent and middleware.
      const out = await agentOn(second, ["1.08"]).invoke(null, thread);
      expect(l.calls).toEqual({ fetch_rate: 2 });
      expect(out.steps.rate).toMatchObject({ status: "succeeded", attempts: 2, cost: 4 });
      expect(out.decisions.map((d) => [d.rule, d.attempt])).toEqual([["transient.retry", 1]]);
      expect(out.budget?.spent).toBe(4);
    } finally {
      if (first.db.open) first.db.close();
      second.db.close();
      rmSync(dir, { recursive: true, force: true });
    }
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
