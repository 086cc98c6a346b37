/**
 * Fields the graph's executor acts on before a step starts, inside createAgent too
 * (docs/decisions/0053-middleware-quality-freshness-watch.md): `write_plan` records `freshFor` and
 * `watch` (their enforcement is a parity row in test/graph/parity.test.ts), and refuses a watcher
 * with side effects as the graph's validator does.
 */
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { planMiddleware } from "../../src/middleware/index.js";
import { lastResults, scriptedAgentModel } from "../helpers/agent-model.js";

const quote = tool(async () => ({ price: 42 }), {
  name: "quote",
  description: "quote",
  schema: z.object({}).passthrough(),
});

async function firstReply(plan: Record<string, unknown>, sideEffectTools: string[] = []) {
  const model = scriptedAgentModel([[{ name: "write_plan", args: plan }], "done"]);
  const agent = createAgent({
    model,
    tools: [quote],
    middleware: [planMiddleware({ sleep: async () => {}, now: () => 0, sideEffectTools })],
    checkpointer: new MemorySaver(),
  });
  const out = await agent.invoke(
    { messages: [{ role: "user", content: "buy" }] },
    { configurable: { thread_id: "a1" } },
  );
  const reply = lastResults(model.received[1]!)
    .map((m) => String(m.content))
    .join("\n");
  return { reply, plan: out.plan };
}

describe("planMiddleware: freshness bounds and watches in the model's plan", () => {
  it("records a step with freshFor", async () => {
    const { reply, plan } = await firstReply({
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
    expect(reply.startsWith("Plan version 1 recorded: 2 steps.")).toBe(true);
    expect(plan?.steps[1]?.freshFor).toEqual({ price: 60_000 });
  });

  it("records an assumption with a read-only watcher", async () => {
    const { reply, plan } = await firstReply({
      steps: [{ id: "q", goal: "quote", tool: "quote", produces: ["price"], assumptions: ["cheap"] }],
      assumptions: [{ id: "cheap", statement: "cheap", watch: { tool: "quote", check: "output.price < 100" } }],
    });
    expect(reply.startsWith("Plan version 1 recorded: 1 steps.")).toBe(true);
    expect(plan?.assumptions[0]?.watch).toEqual({ tool: "quote", check: "output.price < 100" });
  });

  it("refuses a watcher among sideEffectTools, saying why", async () => {
    const { reply, plan } = await firstReply(
      {
        steps: [{ id: "q", goal: "quote", tool: "quote", produces: ["price"], assumptions: ["cheap"] }],
        assumptions: [{ id: "cheap", statement: "cheap", watch: { tool: "quote", check: "output.price < 100" } }],
      },
      ["quote"],
    );
    expect(reply).toBe(
      'The plan was not recorded:\nassumption "cheap" watch names tool "quote", which declares side effects; ' +
        "a watcher must only read (give a read-only lookup tool)\nFix it and call write_plan again.",
    );
    expect(plan).toBeUndefined();
  });
});
