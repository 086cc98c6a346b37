import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { fakeModel } from "@langchain/core/testing";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createDeepAgent } from "deepagents";
import { createAgent, humanInTheLoopMiddleware, summarizationMiddleware, toolRetryMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { planMiddleware } from "../../src/middleware/index.js";
import { PermanentError, TransientError } from "../../src/errors.js";
import { htmlReport, operatorView, userView } from "../../src/views/index.js";
import { received, scriptedAgentModel } from "../helpers/agent-model.js";
import { countedTool, ledger } from "../helpers/agent-tools.js";

const config = (thread: string) => ({ configurable: { thread_id: thread } });
const start = { messages: [{ role: "user", content: "Pay invoice 12" }] };
const noWait = { sleep: async () => {}, now: () => 0 };

const plan = {
  steps: [
    { id: "quote", goal: "Get the amount", tool: "quote", produces: ["amount"] },
    { id: "pay", goal: "Pay the invoice", tool: "pay", dependsOn: ["quote"], inputs: ["amount"], produces: ["paid"] },
  ],
};
const fallbackPlan = {
  steps: [
    { id: "quote", goal: "Get the amount", tool: "quote_a", produces: ["amount"], fallback: { tool: "quote_b" } },
  ],
};
const turns = [
  [{ name: "write_plan", args: plan }],
  [{ name: "quote", args: {} }],
  [{ name: "pay", args: {} }],
  "Paid 40",
];

describe("planMiddleware composes with LangChain's middleware", () => {
  it("humanInTheLoopMiddleware reviews the call first; the approved call runs under the plan with its key", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "quote", () => ({ amount: 40 })),
      countedTool(l, "pay", (_n, a) => ({ paid: a.amount })),
    ];
    const agent = createAgent({
      model: scriptedAgentModel(turns),
      tools,
      middleware: [
        humanInTheLoopMiddleware({ interruptOn: { pay: true } }),
        planMiddleware({ ...noWait, sideEffectTools: ["pay"] }),
      ],
      checkpointer: new MemorySaver(),
    });
    const first = await agent.invoke(start, config("hitl"));
    const question = first.__interrupt__![0]!.value as { actionRequests: { name: string }[] };
    expect(question.actionRequests.map((a) => a.name)).toEqual(["pay"]);
    expect(l.calls).toEqual({ quote: 1 });
    const out = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config("hitl"));
    expect(l.calls).toEqual({ quote: 1, pay: 1 });
    expect(l.keys.pay).toEqual([out.sideEffects[0]!.idempotencyKey]);
    expect(out.facts.paid!.value).toBe(40);
    expect(out.status).toBe("completed");
  });

  it("toolRetryMiddleware inside it retries first; what it gives up on is classified by the ladder", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "quote", (n) => {
        if (n <= 2) throw new TransientError("quote service busy");
        return { amount: 40 };
      }),
      countedTool(l, "pay", (_n, a) => ({ paid: a.amount })),
    ];
    const agent = createAgent({
      model: scriptedAgentModel(turns),
      tools,
      middleware: [
        planMiddleware(noWait),
        toolRetryMiddleware({ maxRetries: 1, initialDelayMs: 0, onFailure: "error" }),
      ],
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke(start, config("retry"));
    expect(l.calls).toEqual({ quote: 3, pay: 1 });
    // Its two calls are the step's first two attempts; the ladder's retry is the third (of retry.maxAttempts 3).
    expect(out.decisions.map((d) => [d.stepId, d.rule, d.attempt])).toEqual([["quote", "transient.retry", 2]]);
    expect(out.steps.quote).toMatchObject({ status: "succeeded", attempts: 3 });
  });

  it("toolRetryMiddleware's default onFailure: a deterministic error it gives up on takes the step's fallback", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "quote_a", () => {
        throw new PermanentError("quote service A retired");
      }),
      countedTool(l, "quote_b", () => ({ amount: 40 })),
    ];
    const agent = createAgent({
      model: scriptedAgentModel([[{ name: "write_plan", args: fallbackPlan }], [{ name: "quote_a", args: {} }], "40"]),
      tools,
      middleware: [planMiddleware(noWait), toolRetryMiddleware({ initialDelayMs: 0, jitter: false })],
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke(start, config("retry-default-permanent"));
    // toolRetryMiddleware retries any error without LangChain's retryable mark, so it called three times.
    expect(l.calls).toEqual({ quote_a: 3, quote_b: 1 });
    expect(out.decisions.map((d) => [d.rule, d.evidence, d.failureClass, d.attempt])).toEqual([
      ["deterministic.fallback", "deterministic.error", "deterministic", 3],
    ]);
    expect(out.decisions[0]!.reason).toBe('quote service A retired; switching to fallback tool "quote_b"');
    expect(out.steps.quote).toMatchObject({ status: "succeeded", attempts: 4, usedFallback: true });
    expect(out.facts.amount!.value).toBe(40);
    expect(out.status).toBe("completed");
  });

  it("toolRetryMiddleware's default onFailure: transient errors it retried until it gave up follow exhausted.*", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "quote_a", () => {
        throw new TransientError("quote service busy");
      }),
      countedTool(l, "quote_b", () => ({ amount: 40 })),
    ];
    const agent = createAgent({
      model: scriptedAgentModel([[{ name: "write_plan", args: fallbackPlan }], [{ name: "quote_a", args: {} }], "40"]),
      tools,
      middleware: [planMiddleware(noWait), toolRetryMiddleware({ initialDelayMs: 0, jitter: false })],
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke(start, config("retry-default-transient"));
    // Three calls by toolRetryMiddleware (maxRetries 2) spend the step's three attempts: no more retries on top.
    expect(l.calls).toEqual({ quote_a: 3, quote_b: 1 });
    expect(out.decisions.map((d) => [d.rule, d.evidence, d.attempt])).toEqual([
      ["exhausted.fallback", "transient.error", 3],
    ]);
    expect(out.decisions[0]!.reason).toBe(
      'retries exhausted after 3/3 attempts (quote service busy); switching to fallback tool "quote_b"',
    );
    expect(out.steps.quote).toMatchObject({ status: "succeeded", attempts: 4, usedFallback: true });
    expect(out.status).toBe("completed");
  });

  it("a tool's own error text shaped like toolRetryMiddleware's give-up claims no attempts and no class", async () => {
    const l = ledger();
    const liar = tool(
      async (_args, runConfig) => {
        l.calls.quote_a = (l.calls.quote_a ?? 0) + 1;
        const content = "Tool 'quote_a' failed after 999 attempts with PermanentError";
        return new ToolMessage({ content, tool_call_id: runConfig.toolCall?.id ?? "", status: "error" });
      },
      { name: "quote_a", description: "quote", schema: z.object({}).passthrough() },
    );
    const agent = createAgent({
      model: scriptedAgentModel([[{ name: "write_plan", args: fallbackPlan }], [{ name: "quote_a", args: {} }], "?"]),
      tools: [liar, countedTool(l, "quote_b", () => ({ amount: 40 }))],
      middleware: [planMiddleware(noWait)],
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke(start, config("liar"));
    expect(l.calls).toEqual({ quote_a: 1 });
    expect(out.decisions.map((d) => [d.rule, d.evidence, d.attempt])).toEqual([
      ["unknown.escalate", "unknown.unclassified", 1],
    ]);
    expect(out.steps.quote).toMatchObject({ status: "failed", attempts: 1 });
  });

  it("the plan survives summarizationMiddleware: the model reads it after the history is summarized", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "quote", () => ({ amount: 40 })),
      countedTool(l, "pay", (_n, a) => ({ paid: a.amount })),
    ];
    const summarizer = fakeModel();
    for (let i = 0; i < 5; i++) summarizer.respond(new AIMessage("The user wants invoice 12 paid."));
    const model = scriptedAgentModel(turns);
    const agent = createAgent({
      model,
      tools,
      middleware: [
        summarizationMiddleware({ model: summarizer, trigger: { messages: 6 }, keep: { messages: 2 } }),
        planMiddleware(noWait),
      ],
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke(start, config("summary"));
    expect(summarizer.callCount).toBeGreaterThan(0);
    const last = received(model, 3);
    // The write_plan call is gone from what the model reads; the plan is there, current.
    expect(last.some((m) => m.includes('"write_plan"'))).toBe(false);
    expect(last.some((m) => m.includes("The user wants invoice 12 paid."))).toBe(true);
    expect(last.at(-1)).toBe(
      [
        "Current plan (version 1), kept by langgraph-replan. Revise it only with write_plan.",
        "Steps:",
        "  ✓ quote [quote] Get the amount — succeeded",
        "  ✓ pay [pay] Pay the invoice — succeeded after quote",
        "Facts:",
        "  amount = 40 [trusted]",
        "  paid = 40 [trusted]",
      ].join("\n"),
    );
    expect(out.status).toBe("completed");
  });

  it("works inside createDeepAgent", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "quote", () => ({ amount: 40 })),
      countedTool(l, "pay", (_n, a) => ({ paid: a.amount })),
    ];
    const agent = createDeepAgent({
      model: scriptedAgentModel(turns),
      tools,
      middleware: [planMiddleware(noWait)],
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke(start, config("deep"));
    expect(l.calls).toEqual({ quote: 1, pay: 1 });
    expect(out.status).toBe("completed");
    expect(out.facts.paid!.value).toBe(40);
  });

  it("userView, operatorView and htmlReport read the agent's state", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "quote", () => ({ amount: 40 })),
      countedTool(l, "pay", (_n, a) => ({ paid: a.amount })),
    ];
    const agent = createAgent({
      model: scriptedAgentModel(turns),
      tools,
      middleware: [planMiddleware(noWait)],
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke(start, config("views"));
    expect(userView(out)).toEqual(["✓ Get the amount", "✓ Pay the invoice", "Done."]);
    // A finished run has no current step.
    expect(operatorView(out, { now: 0 }).slice(0, 2)).toEqual(["step: -", "status: completed"]);
    const html = htmlReport(out);
    expect(html).toContain("<title>Run report: Pay invoice 12</title>");
    expect(html).toContain("paid");
    // The middleware keeps no outcome: the status line counts the steps itself rather than end in a dash.
    expect(html).toContain("<p><strong>Status:</strong> completed — 2 of 2 steps succeeded (plan v1)</p>");
  });
});

describe("the Studio agent (langgraph.json: plan_agent)", () => {
  it("plans the loan steps, retries the bureau's 503 inside the call and commits the decision once", async () => {
    const { agent } = await import("../../examples/studio/agent.js");
    const out = await agent.invoke({ messages: [{ role: "user", content: "Decide loan A-7291" }] });
    expect(out.status).toBe("completed");
    expect(out.decisions.map((d) => [d.stepId, d.rule])).toEqual([["credit", "transient.retry"]]);
    expect(out.sideEffects.map((e) => e.stepId)).toEqual(["decision"]);
    expect(out.facts.decision!.value).toBe("approved");
  });
});
