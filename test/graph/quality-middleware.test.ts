/**
 * `outcome.quality` inside createAgent (docs/decisions/0040-plan-quality-gate.md): the agent's plan
 * that limped through a fallback ends completed, and its outcome says it was degraded.
 */
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { planMiddleware } from "../../src/middleware/index.js";
import { PermanentError } from "../../src/errors.js";
import { userView } from "../../src/views/index.js";
import { scriptedAgentModel, type Turn } from "../helpers/agent-model.js";
import { countedTool, ledger } from "../helpers/agent-tools.js";

const noWait = { sleep: async () => {}, now: () => 0 };
const plan = {
  steps: [{ id: "price", goal: "Get a price", tool: "quote_a", produces: ["price"], fallback: { tool: "quote_b" } }],
};

function run(quoteA: () => unknown) {
  const l = ledger();
  const tools = [countedTool(l, "quote_a", quoteA), countedTool(l, "quote_b", () => ({ price: 12 }))];
  const turns: Turn[] = [[{ name: "write_plan", args: plan }], [{ name: "quote_a", args: { item: "x" } }], "12"];
  const agent = createAgent({
    model: scriptedAgentModel(turns),
    tools,
    middleware: [planMiddleware({ ...noWait })],
    checkpointer: new MemorySaver(),
  });
  return agent.invoke({ messages: [{ role: "user", content: "Price x" }] }, { configurable: { thread_id: "q" } });
}

describe("planMiddleware: outcome.quality", () => {
  it("a plan that used a fallback ends completed, degraded, and says so", async () => {
    const out = await run(() => {
      throw new PermanentError("quote service A retired");
    });
    expect(out.status).toBe("completed");
    expect(out.outcome).toEqual({
      summary: "completed (degraded: 1 fallback used): 1 of 1 steps succeeded (plan v1)",
      quality: {
        degraded: true,
        fallbacksUsed: 1,
        optionalSkipped: 0,
        suspectFactsUsed: 0,
        findings: 0,
        staleRefreshes: 0,
      },
    });
    expect(userView(out as never).at(-1)).toBe("Completed (degraded: 1 fallback used).");
    const clean = await run(() => ({ price: 10 }));
    expect(clean.outcome).toEqual({
      quality: {
        degraded: false,
        fallbacksUsed: 0,
        optionalSkipped: 0,
        suspectFactsUsed: 0,
        findings: 0,
        staleRefreshes: 0,
      },
    });
  });
});
