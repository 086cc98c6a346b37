/**
 * Fields only the graph acts on: `freshFor` (re-reading a stale input) and `watch` (calling a watcher
 * before a step) are refused by planMiddleware's write_plan, with why, instead of being recorded
 * with a promise nothing keeps (docs/decisions/0041-evidence-freshness-and-drift.md).
 */
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { planMiddleware } from "../../src/middleware/index.js";
import { received, scriptedAgentModel } from "../helpers/agent-model.js";

const quote = tool(async () => ({ price: 42 }), {
  name: "quote",
  description: "quote",
  schema: z.object({}).passthrough(),
});

async function firstReply(plan: Record<string, unknown>): Promise<string> {
  const model = scriptedAgentModel([[{ name: "write_plan", args: plan }], "done"]);
  const agent = createAgent({
    model,
    tools: [quote],
    middleware: [planMiddleware({ sleep: async () => {}, now: () => 0 })],
    checkpointer: new MemorySaver(),
  });
  await agent.invoke({ messages: [{ role: "user", content: "buy" }] }, { configurable: { thread_id: "a1" } });
  return String(received(model, 1).at(-1));
}

describe("planMiddleware: fields only the graph acts on", () => {
  it("refuses a step with freshFor, saying why", async () => {
    const reply = await firstReply({
      steps: [
        { id: "q", goal: "quote", tool: "quote", produces: ["price"] },
        {
          id: "q2",
          goal: "quote again",
          tool: "quote",
          inputs: ["price"],
          freshFor: { price: 60_000 },
          dependsOn: ["q"],
        },
      ],
    });
    expect(reply).toContain(
      `step "q2" bounds its inputs' age (freshFor); inside createAgent call the tool again yourself when a fact may be stale`,
    );
    expect(reply.startsWith("The plan was not recorded:")).toBe(true);
  });

  it("refuses an assumption with a watch, saying why", async () => {
    const reply = await firstReply({
      steps: [{ id: "q", goal: "quote", tool: "quote", produces: ["price"], assumptions: ["cheap"] }],
      assumptions: [{ id: "cheap", statement: "cheap", watch: { tool: "quote", check: "output.price < 100" } }],
    });
    expect(reply).toContain(
      `assumption "cheap" has a watch; inside createAgent check it yourself with a tool before the steps that rest on it`,
    );
  });
});
