/**
 * A drive that throws (a journal that cannot write its intent, a clock whose sleep rejects on a stop)
 * ends its attempt with that error: the executor is never left waiting for it, and the thread is
 * released (docs/decisions/0044-one-attempt-driver.md).
 */
import { MemorySaver } from "@langchain/langgraph";
import { setTimeout as wait } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { saverAdapter } from "../../src/storage/index.js";
import { harness, httpError, scriptedTool } from "../helpers/graph.js";

describe("an attempt whose drive throws", () => {
  it("a journal that cannot write the intent: the tool is not called, the step fails with the journal's error", async () => {
    const saver = new MemorySaver();
    const journal = saverAdapter(saver).journal;
    journal.intent = async () => {
      throw new Error("SQLITE_BUSY: database is locked");
    };
    const charge = scriptedTool("charge", [{ receipt: "r1" }]);
    const plan: PlanDraft = {
      steps: [
        { id: "pay", goal: "Pay", tool: "charge", args: { amount: 1 }, sideEffects: ["charges"], idempotent: false },
      ],
    };
    const h = harness(plan, [charge], { checkpointer: saver });
    const out = await h.run();
    expect(charge.calls).toHaveLength(0);
    expect(out.steps.pay?.status).toBe("failed");
    expect(out.steps.pay?.error?.message).toBe("SQLITE_BUSY: database is locked");
  });

  it("a clock whose sleep rejects when the caller stops during a backoff: the thread is released and resumes", async () => {
    const lookup = scriptedTool("lookup", [httpError(503), { x: 1 }]);
    const clock = {
      now: () => Date.now(),
      sleep: (ms: number, signal?: AbortSignal) => wait(ms, undefined, { signal }),
    };
    const plan: PlanDraft = {
      steps: [
        {
          id: "s",
          goal: "Look it up",
          tool: "lookup",
          produces: ["x"],
          retry: { maxAttempts: 3, backoff: "fixed", initialDelayMs: 300 },
        },
      ],
    };
    const graph = createPlanManager({ tools: [lookup], planner: staticPlanner({ plan }), clock }).compile({
      checkpointer: new MemorySaver(),
    });
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 150);
    const first = await graph
      .invoke({ goal: "g" }, { configurable: { thread_id: "t" }, signal: stop.signal })
      .catch((e: unknown) => e);
    expect(first).toMatchObject({ name: "AbortError" });
    const resumed = await graph.invoke(null, { configurable: { thread_id: "t" } });
    expect(resumed.status).toBe("completed");
    expect(resumed.steps.s).toMatchObject({ status: "succeeded", attempts: 2 });
    expect(lookup.calls).toHaveLength(2);
  });
});
