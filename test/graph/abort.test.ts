/**
 * A run stopped by its caller (an aborted signal, a stream left with `break`) keeps every result a
 * tool gives back, and `step_finished` promises the attempt is in a checkpoint
 * (docs/decisions/0028-a-stopped-run-keeps-its-results.md).
 */
import { tool } from "@langchain/core/tools";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { isPlanManagerError } from "../../src/errors.js";
import { fakeClock } from "../helpers/clock.js";
import { ScriptedChatModel } from "../helpers/fake-model.js";
import type { BaseMessage } from "@langchain/core/messages";
import type { Loose } from "../helpers/graph.js";

const plan: PlanDraft = {
  steps: [
    {
      id: "pay",
      goal: "Pay the supplier",
      tool: "charge",
      args: { amount: 5 },
      produces: ["receipt"],
      sideEffects: ["payments"],
      idempotent: false,
    },
    { id: "note", goal: "File the receipt", tool: "file", inputs: ["receipt"], dependsOn: ["pay"] },
  ],
};

function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open: () => open() };
}

/**
 * A payment tool that counts its calls per idempotency key and answers when the test opens its gate,
 * and a read-only `lookup` that waits for its gate too (LangChain's `tool()` gives up when its signal aborts).
 */
function payments(options: { gated?: boolean } = {}) {
  const calls = new Map<string, number>();
  const signals: AbortSignal[] = [];
  const release = gate();
  const started = gate();
  const charge = tool(
    async (_args, config) => {
      const key = String(config?.configurable?.idempotencyKey);
      const n = (calls.get(key) ?? 0) + 1;
      calls.set(key, n);
      if (config?.signal) signals.push(config.signal);
      started.open();
      if (options.gated !== false && n === 1) await release.opened;
      return { receipt: `r-${n}` };
    },
    { name: "charge", description: "Charge the supplier", schema: z.object({ amount: z.number() }) },
  );
  const lookups: AbortSignal[] = [];
  const lookup = tool(
    async (_args, config) => {
      lookups.push(config.signal!);
      started.open();
      if (lookups.length === 1) await release.opened;
      return { rate: lookups.length };
    },
    { name: "lookup", description: "Look up a rate", schema: z.object({}).passthrough() },
  );
  const file = tool(async () => ({ filed: true }), {
    name: "file",
    description: "File a receipt",
    schema: z.object({}).passthrough(),
  });
  return { charge, lookup, file, calls, signals, lookups, started: started.opened, release: release.open };
}

/** Polls on the event loop until the condition holds (what it waits for is released by the test). */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error("condition not met within 2 s");
}

/** Resumes the thread once the stopped run has let go of it (`thread_busy` until then). */
async function resume(graph: { invoke(input: null, config: object): Promise<unknown> }, config: object) {
  let out: Loose | undefined;
  await until(async () => {
    try {
      out = (await graph.invoke(null, config)) as Loose;
      return true;
    } catch (error) {
      if (isPlanManagerError(error) && error.code === "thread_busy") return false;
      throw error;
    }
  });
  return out!;
}

/** A saver whose checkpoint writes take a moment, so that anything sent before one lands is seen before it. */
function slowWrites(saver: BaseCheckpointSaver): BaseCheckpointSaver {
  const put = saver.put.bind(saver);
  saver.put = async (...args: Parameters<BaseCheckpointSaver["put"]>) => {
    await new Promise((resolve) => setTimeout(resolve, 10));
    return put(...args);
  };
  return saver;
}

const savers: [string, () => BaseCheckpointSaver][] = [
  ["MemorySaver", () => new MemorySaver()],
  ["SqliteSaver", () => SqliteSaver.fromConnString(":memory:")],
];

function build(t: ReturnType<typeof payments>, checkpointer: BaseCheckpointSaver, draft = plan) {
  const tools = [t.charge, t.lookup, t.file];
  return createPlanManager({ tools, planner: staticPlanner({ plan: draft }), clock: fakeClock() }).compile({
    checkpointer,
  });
}

/** A lookup that answers at once (and counts its calls in `t.lookups`). */
function quickLookup(t: ReturnType<typeof payments>) {
  return tool(
    async (_args, config) => {
      t.lookups.push(config.signal!);
      return { rate: 1 };
    },
    { name: "lookup", description: "Look up a rate", schema: z.object({}).passthrough() },
  );
}

const lookupPlan: PlanDraft = { steps: [{ id: "rate", goal: "Look up the rate", tool: "lookup", produces: ["rate"] }] };

describe.each(savers)("a run stopped mid-step (%s)", (name, saver) => {
  it("aborts the signal of a read-only call in flight when the run's signal aborts; resume calls it again", async () => {
    const t = payments();
    const graph = build(t, saver(), lookupPlan);
    const config = { configurable: { thread_id: `signal-${name}` } };
    const controller = new AbortController();
    const run = graph.invoke({ goal: "rate" }, { ...config, signal: controller.signal }).catch((e: Error) => e.name);
    await t.started;
    expect(t.lookups.map((s) => s.aborted)).toEqual([false]);
    controller.abort();
    expect(t.lookups.map((s) => s.aborted)).toEqual([true]);
    expect(await run).toBe("AbortError");
    const out = await resume(graph, config);
    expect(out.status).toBe("completed");
    expect(t.lookups).toHaveLength(2);
    expect(out.facts.rate.value).toBe(2);
    expect(out.steps.rate.attempts).toBe(1);
    expect(out.decisions).toEqual([]);
  });

  it("records a payment whose result arrives after the abort: resume does not pay again", async () => {
    const t = payments();
    const graph = build(t, saver());
    const config = { configurable: { thread_id: `late-${name}` } };
    const controller = new AbortController();
    const run = graph.invoke({ goal: "pay" }, { ...config, signal: controller.signal }).catch((e: Error) => e.name);
    await t.started;
    controller.abort();
    expect(await run).toBe("AbortError");
    t.release(); // the payment went through, after the caller stopped waiting
    const out = await resume(graph, config);
    expect(out.status).toBe("completed");
    expect([...t.calls.values()]).toEqual([1]);
    expect(out.facts.receipt.value).toBe("r-1");
    expect(out.sideEffects.map((e: Loose) => e.stepId)).toEqual(["pay"]);
    expect(out.steps.pay.attempts).toBe(1);
  });

  it("records a payment whose result arrives after its stream was left with break", async () => {
    const t = payments();
    const graph = build(t, saver());
    const config = { configurable: { thread_id: `break-${name}` } };
    const stream = await graph.stream({ goal: "pay" }, { ...config, streamMode: "custom" });
    for await (const event of stream) if ((event as Loose).type === "step_started") break;
    t.release();
    const out = await resume(graph, config);
    expect(out.status).toBe("completed");
    expect([...t.calls.values()]).toEqual([1]);
    expect(out.facts.receipt.value).toBe("r-1");
  });

  it("a stop between two steps, a payment still in flight: the next visit waits for it and records it", async () => {
    const t = payments();
    const controller = new AbortController();
    const checkpointer = saver();
    const put = checkpointer.put.bind(checkpointer);
    // The stop lands while LangGraph writes the checkpoint of the visit that recorded "rate" (the
    // payment still running): between two supersteps, no executor visit in progress.
    checkpointer.put = async (...args: Parameters<BaseCheckpointSaver["put"]>) => {
      const written = await put(...args);
      if (args[1].channel_values.status !== undefined && t.lookups.length === 1 && !controller.signal.aborted) {
        const steps = (await graph.getState(config)).values.steps as Loose;
        if (steps.rate?.status === "succeeded") controller.abort();
      }
      return written;
    };
    const draft: PlanDraft = { steps: [{ ...plan.steps[0]! }, { id: "rate", goal: "Rate", tool: "lookup" }] };
    const graph = build({ ...t, lookup: quickLookup(t) }, checkpointer, draft);
    const config = { configurable: { thread_id: `between-${name}` } };
    const run = graph.invoke({ goal: "pay" }, { ...config, signal: controller.signal }).catch((e: Error) => e.name);
    expect(await run).toBe("AbortError");
    expect(t.signals.map((s) => s.aborted)).toEqual([false]);
    t.release();
    const out = await resume(graph, config);
    expect(out.status).toBe("completed");
    expect([...t.calls.values()]).toEqual([1]);
    expect(out.facts.receipt.value).toBe("r-1");
    expect(t.lookups).toHaveLength(1);
  });

  it("a payment that never answers: the stopped run gives up at its timeout, and resume calls it again under its key", async () => {
    const t = payments();
    // Only a tool that honours keys is called again after a cut call; any other is asked about
    // (test/graph/effect-journal.test.ts; docs/decisions/0038-effect-journal.md).
    const draft: PlanDraft = { steps: [{ ...plan.steps[0]!, timeoutMs: 50, honoursIdempotencyKey: true }] };
    const graph = build(t, saver(), draft);
    const config = { configurable: { thread_id: `hangs-${name}` } };
    const controller = new AbortController();
    const run = graph.invoke({ goal: "pay" }, { ...config, signal: controller.signal }).catch((e: Error) => e.name);
    await t.started;
    controller.abort();
    expect(await run).toBe("AbortError");
    const out = await resume(graph, config);
    t.release();
    expect(out.status).toBe("completed");
    const keys = [...t.calls.keys()];
    expect(keys).toHaveLength(1);
    expect(t.calls.get(keys[0]!)).toBe(2);
    expect(out.steps.pay.attempts).toBe(1);
    // The cut call made again under its key is a settlement, recorded; no ladder decision.
    expect(out.decisions.map((d: Loose) => [d.rule, d.stepId, d.attempt])).toEqual([["effect.recalled", "pay", 1]]);
  });

  it("a write made right after the stop lands after the stopped run's last results, not beside them", async () => {
    const t = payments();
    const graph = build(t, saver());
    const config = { configurable: { thread_id: `write-after-${name}` } };
    const controller = new AbortController();
    const run = graph.invoke({ goal: "pay" }, { ...config, signal: controller.signal }).catch((e: Error) => e.name);
    await t.started;
    controller.abort();
    expect(await run).toBe("AbortError");
    const written = graph.updateState(config, { scopeChanges: ["also file a copy"] });
    // Room for a write that did not wait to land first (the payment answers after it).
    await new Promise((resolve) => setTimeout(resolve, 20));
    t.release();
    await written;
    const values = (await graph.getState(config)).values as Loose;
    expect(values.scopeChanges).toEqual(["also file a copy"]);
    expect(values.steps.pay.status).toBe("succeeded");
    expect(values.facts.receipt.value).toBe("r-1");
  });

  it("does not abort a payment in flight: a stop cannot call back an effect under way", async () => {
    const t = payments();
    const graph = build(t, saver());
    const config = { configurable: { thread_id: `no-abort-${name}` } };
    const controller = new AbortController();
    const run = graph.invoke({ goal: "pay" }, { ...config, signal: controller.signal }).catch((e: Error) => e.name);
    await t.started;
    controller.abort();
    expect(await run).toBe("AbortError");
    expect(t.signals.map((s) => s.aborted)).toEqual([false]);
    // The stopped run still holds its thread: it waits for the payment.
    const early = await graph.invoke(null, config).catch((e: unknown) => isPlanManagerError(e) && e.code);
    expect(early).toBe("thread_busy");
    t.release();
    expect((await resume(graph, config)).status).toBe("completed");
    expect([...t.calls.values()]).toEqual([1]);
  });
});

describe.each(savers)("step_finished (%s)", (name, saver) => {
  it("is sent once the checkpoint holds the attempt", async () => {
    const t = payments({ gated: false });
    const graph = build(t, slowWrites(saver()));
    const config = { configurable: { thread_id: `durable-${name}` } };
    const stream = await graph.stream({ goal: "pay" }, { ...config, streamMode: "custom" });
    const seen: string[] = [];
    for await (const event of stream) {
      const e = event as Loose;
      if (e.type !== "step_finished") continue;
      const stored = (await graph.getState(config)).values as Loose;
      seen.push(`${e.stepId} ${e.status}: stored ${stored.steps[e.stepId]?.status}`);
    }
    expect(seen).toEqual(["pay succeeded: stored succeeded", "note succeeded: stored succeeded"]);
  });

  it("a caller that stops reading at the payment's step_finished does not pay again on resume", async () => {
    const t = payments({ gated: false });
    const graph = build(t, slowWrites(saver()));
    const config = { configurable: { thread_id: `stop-at-finish-${name}` } };
    const stream = await graph.stream({ goal: "pay" }, { ...config, streamMode: "custom" });
    for await (const event of stream) if ((event as Loose).type === "step_finished") break;
    const out = await resume(graph, config);
    expect(out.status).toBe("completed");
    expect([...t.calls.values()]).toEqual([1]);
    expect(out.sideEffects.map((e: Loose) => e.stepId)).toEqual(["pay"]);
  });
});

/**
 * The scenario of a user who cancels with an AbortSignal while a read-only call that honours its
 * signal and a payment run side by side, and calls `invoke(null)` at once when the payment returns.
 */
describe.each(savers)("cancelling a run with its AbortSignal (%s)", (name, saver) => {
  it("aborts the read-only call, lets go of the thread once the payment returns, and never pays twice", async () => {
    const t = payments();
    const aborts: string[] = [];
    // Honours its signal: gives up with the signal's reason as soon as it aborts.
    const lookup = tool(
      (_args, config) =>
        new Promise<{ rate: number }>((resolve, reject) => {
          t.lookups.push(config.signal!);
          config.signal!.addEventListener("abort", () => {
            aborts.push("lookup");
            reject(config.signal!.reason as Error);
          });
          if (t.lookups.length > 1) resolve({ rate: t.lookups.length });
        }),
      { name: "lookup", description: "Look up a rate", schema: z.object({}).passthrough() },
    );
    const draft: PlanDraft = {
      steps: [{ ...plan.steps[0]! }, { id: "rate", goal: "Look up the rate", tool: "lookup", produces: ["rate"] }],
    };
    const graph = build({ ...t, lookup }, saver(), draft);
    const config = { configurable: { thread_id: `cancel-${name}` } };
    const controller = new AbortController();
    const run = graph.invoke({ goal: "pay" }, { ...config, signal: controller.signal }).catch((e: Error) => e.name);
    await t.started;
    await until(() => t.lookups.length === 1);
    controller.abort();
    expect(await run).toBe("AbortError");
    expect(aborts).toEqual(["lookup"]);
    expect(t.signals.map((s) => s.aborted)).toEqual([false]);
    t.release();
    const out = await resume(graph, config);
    expect(out.status).toBe("completed");
    expect([...t.calls.values()]).toEqual([1]);
    expect(out.facts.receipt.value).toBe("r-1");
    expect(out.facts.rate.value).toBe(2);
    expect(out.steps.rate.attempts).toBe(1);
    expect(out.decisions).toEqual([]);
  });
});

describe.each(savers)("cancelling a run with an agent step in flight (%s)", (name, saver) => {
  // The model call honours its signal: the stop reaches it as it reaches a read-only tool.
  it("aborts the read-only agent step's model call and lets go of the thread once the payment returns", async () => {
    const t = payments();
    const seen: AbortSignal[] = [];
    class SlowModel extends ScriptedChatModel {
      override async _generate(messages: BaseMessage[], options?: this["ParsedCallOptions"]) {
        seen.push(options!.signal!);
        if (seen.length === 1)
          await new Promise((_, reject) =>
            options!.signal!.addEventListener("abort", () => reject(options!.signal!.reason as Error)),
          );
        return super._generate(messages);
      }
    }
    const analyst = new SlowModel([{ rate: 7 }]);
    const draft: PlanDraft = {
      steps: [{ ...plan.steps[0]! }, { id: "rate", goal: "Estimate the rate", agent: "analyst", produces: ["rate"] }],
    };
    const graph = createPlanManager({
      tools: [t.charge, t.lookup, t.file],
      agents: { analyst },
      planner: staticPlanner({ plan: draft }),
      clock: fakeClock(),
    }).compile({ checkpointer: saver() });
    const config = { configurable: { thread_id: `cancel-agent-${name}` } };
    const controller = new AbortController();
    const run = graph.invoke({ goal: "pay" }, { ...config, signal: controller.signal }).catch((e: Error) => e.name);
    await t.started;
    await until(() => seen.length === 1);
    controller.abort();
    expect(await run).toBe("AbortError");
    expect(seen.map((s) => s.aborted)).toEqual([true]);
    t.release();
    const out = await resume(graph, config);
    expect(out.status).toBe("completed");
    expect([...t.calls.values()]).toEqual([1]);
    expect(out.facts.rate.value).toBe(7);
    expect(out.steps.rate.attempts).toBe(1);
  });
});
