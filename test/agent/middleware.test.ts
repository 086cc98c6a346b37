import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { planMiddleware } from "../../src/agent/index.js";
import { TransientError } from "../../src/errors.js";
import { received, scriptedAgentModel } from "../helpers/agent-model.js";

const config = (thread: string) => ({ configurable: { thread_id: thread } });

function rateTools(failures: number) {
  const calls = { fetch_rate: 0, convert: 0 };
  const fetchRate = tool(
    async ({ currency }) => {
      calls.fetch_rate += 1;
      if (calls.fetch_rate <= failures) throw new TransientError("rate service busy");
      return { rate: currency === "EUR" ? 1.08 : 1 };
    },
    { name: "fetch_rate", description: "Fetch an exchange rate", schema: z.object({ currency: z.string() }) },
  );
  const convert = tool(
    async ({ amount, rate }) => {
      calls.convert += 1;
      return { total: amount * rate };
    },
    { name: "convert", description: "Convert", schema: z.object({ amount: z.number(), rate: z.number() }) },
  );
  return { calls, tools: [fetchRate, convert] };
}

const ratePlan = {
  steps: [
    { id: "rate", goal: "Fetch the rate", tool: "fetch_rate", produces: ["rate"], successSignal: "output.rate > 0" },
    { id: "total", goal: "Convert", tool: "convert", dependsOn: ["rate"], inputs: ["rate"], produces: ["total"] },
  ],
};

describe("planMiddleware inside createAgent", () => {
  it("retries a transient failure inside the call, records trusted facts and shows the plan every turn", async () => {
    const { calls, tools } = rateTools(1);
    const delays: number[] = [];
    const model = scriptedAgentModel([
      [{ name: "write_plan", args: ratePlan }],
      [{ name: "fetch_rate", args: { currency: "EUR" } }],
      [{ name: "convert", args: { amount: 100 } }],
      "100 EUR is 108 USD",
    ]);
    const agent = createAgent({
      model,
      tools,
      middleware: [planMiddleware({ sleep: async (ms) => void delays.push(ms), now: () => 0 })],
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke({ messages: [{ role: "user", content: "Convert 100 EUR" }] }, config("t1"));
    expect(out.status).toBe("completed");
    expect(out.goal).toBe("Convert 100 EUR");
    expect(calls).toEqual({ fetch_rate: 2, convert: 1 });
    expect(delays).toEqual([200]);
    expect(out.facts.rate).toEqual({
      value: 1.08,
      label: "trusted",
      producedBy: "rate",
      planVersion: 1,
      assumptions: [],
      derivedFrom: [],
    });
    expect(out.facts.total!.value).toBe(108);
    expect(out.decisions.map((d) => [d.seq, d.stepId, d.rule, d.delayMs])).toEqual([[1, "rate", "transient.retry", 200]]);
    expect(out.steps.rate).toMatchObject({ status: "succeeded", attempts: 2 });
    // The model saw one result for fetch_rate, and the plan at the end of every turn after write_plan.
    const third = received(model, 2);
    expect(third.at(-2)).toBe('{"rate":1.08}');
    expect(third.at(-1)).toContain("✓ rate [fetch_rate] Fetch the rate — succeeded");
    expect(third.at(-1)).toContain("· total [convert] Convert — ready after rate");
    expect(third.at(-1)).toContain("rate = 1.08 [trusted]");
    expect(received(model, 3).filter((m) => m.startsWith("Current plan"))).toHaveLength(1);
  });
});
