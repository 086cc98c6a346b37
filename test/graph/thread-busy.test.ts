import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createPlanManager } from "../../src/graph/create-plan-manager.js";
import { isPlanManagerError } from "../../src/errors.js";
import { staticPlanner } from "../../src/planners/static-planner.js";
import type { PlanDraft } from "../../src/plan/schema/plan.js";
import { fakeClock } from "../helpers/clock.js";

/** A slow side-effecting tool that counts its calls and can be released by the test. */
function slowCharge() {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const calls: string[] = [];
  const charge = tool(
    async (_args, config) => {
      calls.push(String(config?.configurable?.idempotencyKey));
      await gate;
      return { receipt: "r-1" };
    },
    {
      name: "charge",
      description: "Charge a card",
      schema: z.object({}).passthrough(),
      metadata: { sideEffects: ["charge card"] },
    },
  );
  return { charge, calls, release: () => release() };
}

/** Polls a condition on the event loop (the tool's gate is released by the test, not by time). */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error("condition not met within 1 s");
}

/** What a run settled with (its error, or "ok"), or "still running" if it is waiting on the tool's gate. */
async function settledWithin(run: Promise<unknown>): Promise<unknown> {
  const late = new Promise((r) => setTimeout(() => r("still running: it started the tool again"), 200));
  return Promise.race([
    run.then(
      () => "ok",
      (e: unknown) => e,
    ),
    late,
  ]);
}

const plan: PlanDraft = { steps: [{ id: "pay", goal: "Pay", tool: "charge", produces: ["receipt"] }] };

function graphWith(charge: ReturnType<typeof slowCharge>["charge"]) {
  return createPlanManager({ tools: [charge], planner: staticPlanner({ plan }), clock: fakeClock() }).compile({
    checkpointer: new MemorySaver(),
  });
}

describe("one run per thread", () => {
  it("refuses a second concurrent invoke on the same thread: the side effect runs once", async () => {
    const slow = slowCharge();
    const graph = graphWith(slow.charge);
    const config = { configurable: { thread_id: "order-1" } };
    const first = graph.invoke({ goal: "pay" }, config);
    await new Promise((r) => setTimeout(r, 20));
    const error = await graph.invoke({ goal: "pay" }, config).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isPlanManagerError(error) && error.code).toBe("thread_busy");
    expect((error as Error).message).toBe(
      'thread "order-1" is already running in this process; wait for that run to finish (or use another thread_id): two runs on one thread would both call every tool',
    );
    slow.release();
    expect((await first).status).toBe("completed");
    expect(slow.calls).toHaveLength(1);
  });

  it("releases the thread when a run ends, fails, is interrupted or its stream is abandoned", async () => {
    const slow = slowCharge();
    slow.release();
    const graph = graphWith(slow.charge);
    const config = { configurable: { thread_id: "order-2" } };
    const stream = await graph.stream({ goal: "pay" }, { ...config, streamMode: "updates" });
    for await (const _chunk of stream) break;
    const review = createPlanManager({
      tools: [slow.charge],
      planner: staticPlanner({ plan }),
      reviewPlan: true,
      clock: fakeClock(),
    }).compile({
      checkpointer: new MemorySaver(),
    });
    const paused: Record<string, unknown> = await review.invoke({ goal: "pay" }, { configurable: { thread_id: "r" } });
    expect(paused.__interrupt__).toBeDefined();
    const resumed = await review.invoke(new Command({ resume: { action: "approve" } }), {
      configurable: { thread_id: "r" },
    });
    expect(resumed.status).toBe("completed");
    const again = await graph.invoke(null, config);
    expect(again.status).toBe("completed");
  });

  it("holds the thread after an abort until the step in progress returns: the tool is not started twice at once", async () => {
    const slow = slowCharge();
    const graph = graphWith(slow.charge);
    const config = { configurable: { thread_id: "order-3" } };
    const controller = new AbortController();
    const first = graph.invoke({ goal: "pay" }, { ...config, signal: controller.signal }).then(
      () => "finished",
      (e: Error) => e.message,
    );
    await until(() => slow.calls.length === 1);
    controller.abort();
    expect(await first).toBe("This operation was aborted");
    const early = await settledWithin(graph.invoke(null, config));
    expect(isPlanManagerError(early) && early.code).toBe("thread_busy");
    expect(slow.calls).toHaveLength(1);
    slow.release();
    await until(
      async () =>
        await graph.invoke(null, config).then(
          () => true,
          () => false,
        ),
    );
    // The stopped run waited for the charge and checkpointed its result: the resumed run does not charge again.
    expect(slow.calls).toHaveLength(1);
    expect((await graph.getState(config)).values.status).toBe("completed");
    expect((await graph.getState(config)).values.facts.receipt.value).toBe("r-1");
  });

  it("holds the thread after a stream is abandoned mid-step until the step returns, then frees it", async () => {
    const slow = slowCharge();
    const graph = graphWith(slow.charge);
    const config = { configurable: { thread_id: "order-4" } };
    const stream = await graph.stream({ goal: "pay" }, { ...config, streamMode: "custom" });
    for await (const event of stream) if ((event as { type: string }).type === "step_started") break;
    const early = await settledWithin(graph.invoke(null, config));
    expect(isPlanManagerError(early) && early.code).toBe("thread_busy");
    expect(slow.calls).toHaveLength(1);
    slow.release();
    await until(
      async () =>
        await graph.invoke(null, config).then(
          () => true,
          () => false,
        ),
    );
    expect((await graph.getState(config)).values.status).toBe("completed");
  });

  it("frees the thread of a stream stopped through its signal once the step in progress returns", async () => {
    const slow = slowCharge();
    const controller = new AbortController();
    // The caller stops the run from inside the step (as a UI's stop button would, mid-call).
    const stopping = tool(
      async (args, config) => {
        controller.abort();
        return slow.charge.invoke(args, config);
      },
      {
        name: "charge",
        description: "Charge a card",
        schema: z.object({}).passthrough(),
        metadata: slow.charge.metadata,
      },
    );
    const graph = graphWith(stopping as unknown as typeof slow.charge);
    const config = { configurable: { thread_id: "order-5" } };
    const stream = await graph.stream({ goal: "pay" }, { ...config, streamMode: "custom", signal: controller.signal });
    const read = (async () => {
      for await (const _event of stream);
    })().then(
      () => "finished",
      (e: Error) => e.name,
    );
    expect(await read).toBe("AbortError");
    const early = await settledWithin(graph.invoke(null, config));
    expect(isPlanManagerError(early) && early.code).toBe("thread_busy");
    slow.release();
    // LangChain's stream rejects the reader on abort without closing the run's generator: the thread
    // was held for good (thread_busy forever), so a scope change written then could never be planned.
    await until(
      async () =>
        await graph.invoke(null, config).then(
          () => true,
          () => false,
        ),
    );
    expect(slow.calls).toHaveLength(1);
    expect((await graph.getState(config)).values.status).toBe("completed");
  });

  it("releases the thread when the run throws", async () => {
    const slow = slowCharge();
    slow.release();
    const graph = graphWith(slow.charge);
    const config = { configurable: { thread_id: "order-5" } };
    const error = await graph.invoke({ goal: "pay" }, { ...config, recursionLimit: 1 }).then(
      () => undefined,
      (e: Error) => e.name,
    );
    expect(error).toBe("GraphRecursionError");
    expect((await graph.invoke(null, config)).status).toBe("completed");
    expect(slow.calls).toHaveLength(1);
  });

  it("runs different threads at the same time", async () => {
    const slow = slowCharge();
    const graph = graphWith(slow.charge);
    const a = graph.invoke({ goal: "pay" }, { configurable: { thread_id: "a" } });
    const b = graph.invoke({ goal: "pay" }, { configurable: { thread_id: "b" } });
    await new Promise((r) => setTimeout(r, 20));
    slow.release();
    expect([(await a).status, (await b).status]).toEqual(["completed", "completed"]);
    expect(slow.calls).toHaveLength(2);
  });
});
