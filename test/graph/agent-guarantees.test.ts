/**
 * The graph's guarantees inside createAgent: what `planMiddleware` enforces on every step call as
 * the executor does — a timeout, checked outputs, a bound on refused calls, steps with arguments,
 * live events, and a status the CLI reads.
 */
import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, summarizationMiddleware } from "langchain";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { planMiddleware } from "../../src/middleware/index.js";
import { writePlanTool } from "../../src/middleware/write-plan.js";
import type { AgentEvent } from "../../src/middleware/agent-events.js";
import { AssumptionBrokenError, TransientError } from "../../src/errors.js";
import type { PlanEvent } from "../../src/index.js";
import { LIMITS } from "../../src/plan/schema/primitives.js";
import { received, scriptedAgentModel, type Turn } from "../helpers/agent-model.js";
import { countedTool, ledger } from "../helpers/agent-tools.js";

const noWait = { sleep: async () => {}, now: () => 0 };
const start = { messages: [{ role: "user", content: "Look it up" }] };
const config = (thread: string) => ({ configurable: { thread_id: thread } });

function agentWith(turns: Turn[], tools: Parameters<typeof createAgent>[0]["tools"], options = {}) {
  const model = scriptedAgentModel(turns);
  const agent = createAgent({
    model,
    tools: tools!,
    middleware: [planMiddleware({ ...noWait, ...options })],
    checkpointer: new MemorySaver(),
  });
  return { model, agent };
}

/** A tool that never answers; it counts its calls and the aborts of its signal. */
function hangingTool() {
  const seen = { calls: 0, aborted: 0 };
  const hang = tool(
    (_args: Record<string, unknown>, runConfig) => {
      seen.calls += 1;
      return new Promise<never>(() => {
        runConfig?.signal?.addEventListener("abort", () => void (seen.aborted += 1), { once: true });
      });
    },
    { name: "lookup", description: "lookup", schema: z.object({}).passthrough() },
  );
  return { seen, hang };
}

const lookupPlan = (extra: Record<string, unknown> = {}) => ({
  steps: [{ id: "find", goal: "Look it up", tool: "lookup", retry: { maxAttempts: 2, backoff: "none" }, ...extra }],
});

describe("planMiddleware: a step call times out as in the graph", () => {
  it("a hanging tool times out after the step's timeoutMs, its signal aborts, and the ladder retries then escalates", async () => {
    const { seen, hang } = hangingTool();
    const call = [{ name: "lookup", args: { q: "x" } }];
    const { agent } = agentWith([[{ name: "write_plan", args: lookupPlan({ timeoutMs: 10 }) }], call, "?"], [hang]);
    const out = await agent.invoke(start, config("timeout"));
    expect(seen).toEqual({ calls: 2, aborted: 2 });
    expect(out.decisions.map((d) => [d.rule, d.failureClass])).toEqual([
      ["transient.retry", "transient"],
      ["exhausted.escalate", "deterministic"],
    ]);
    expect(out.decisions[0]!.reason).toContain("step timed out after 10 ms");
    expect(out.steps.find).toMatchObject({ status: "failed", attempts: 2, error: { name: "StepTimeout" } });
    expect(out.status).toBe("awaiting_human");
  });

  it("policy.defaultTimeoutMs bounds a step that sets no timeoutMs", async () => {
    const { seen, hang } = hangingTool();
    const call = [{ name: "lookup", args: { q: "x" } }];
    const { agent } = agentWith([[{ name: "write_plan", args: lookupPlan() }], call, "?"], [hang], {
      policy: { defaultTimeoutMs: 10 },
    });
    const out = await agent.invoke(start, config("default-timeout"));
    expect(seen).toEqual({ calls: 2, aborted: 2 });
    expect(out.decisions.at(-1)!.reason).toContain("step timed out after 10 ms");
  });
});

describe("planMiddleware: outputs are checked as in the graph", () => {
  const cyclic = () => {
    const o: Record<string, unknown> = { a: 1 };
    o.self = o;
    return o;
  };
  // As the executor judges them (the same policy function): nothing lacks the produced field; a cycle is not storable.
  for (const [name, body, error, why] of [
    ["undefined", () => undefined, "SuccessSignalUnmet", "output undefined lacks produced field answer"],
    ["a circular object", cyclic, "OutputRejected", "output.self is a circular reference"],
  ] as const)
    it(`a tool returning ${name} is rejected, never a trusted fact`, async () => {
      const l = ledger();
      const tools = [countedTool(l, "lookup", body)];
      const plan = { steps: [{ id: "find", goal: "Look it up", tool: "lookup", produces: ["answer"] }] };
      const { agent } = agentWith([[{ name: "write_plan", args: plan }], [{ name: "lookup", args: {} }], "?"], tools);
      const out = await agent.invoke(start, config(`output-${name}`));
      expect(out.facts).toEqual({});
      expect(out.steps.find).toMatchObject({ status: "failed", error: { name: error } });
      expect(out.steps.find!.error!.message).toContain(why);
      expect(out.status).toBe("awaiting_human");
    });
});

describe("planMiddleware: the plan survives summarization in either order", () => {
  const payPlan = {
    steps: [
      { id: "quote", goal: "Get the amount", tool: "quote", produces: ["amount"] },
      { id: "pay", goal: "Pay", tool: "pay", dependsOn: ["quote"], inputs: ["amount"], produces: ["paid"] },
      { id: "mail", goal: "Mail the receipt", tool: "mail", dependsOn: ["pay"] },
    ],
  };
  const view = (marks: string[]) =>
    [
      "Current plan (version 1), kept by langgraph-replan. Revise it only with write_plan.",
      "Steps:",
      `  ${marks[0]} quote [quote] Get the amount — ${marks[0] === "✓" ? "succeeded" : "ready"}`,
      `  ${marks[1]} pay [pay] Pay — ${marks[1] === "✓" ? "succeeded" : "ready"} after quote`,
      `  · mail [mail] Mail the receipt — ${marks[1] === "✓" ? "ready" : "waiting"} after pay`,
    ].join("\n");
  for (const planFirst of [true, false])
    it(`listed ${planFirst ? "before" : "after"} summarizationMiddleware, the model reads the current plan last, once, every turn`, async () => {
      const l = ledger();
      const tools = [
        countedTool(l, "quote", () => ({ amount: 40 })),
        countedTool(l, "pay", (_n, a) => ({ paid: a.amount })),
        countedTool(l, "mail", () => ({ sent: true })),
      ];
      const summarizer = fakeModel();
      for (let i = 0; i < 8; i++) summarizer.respond(new AIMessage("The user wants invoice 12 paid."));
      const model = scriptedAgentModel([
        [{ name: "write_plan", args: payPlan }],
        [{ name: "quote", args: {} }],
        [{ name: "pay", args: {} }],
        [{ name: "mail", args: {} }],
        "Paid 40 and mailed the receipt",
      ]);
      const summary = summarizationMiddleware({ model: summarizer, trigger: { messages: 4 }, keep: { messages: 2 } });
      const plan = planMiddleware(noWait);
      const agent = createAgent({
        model,
        tools,
        middleware: planFirst ? [plan, summary] : [summary, plan],
        checkpointer: new MemorySaver(),
      });
      const out = await agent.invoke(start, config(`summary-${planFirst}`));
      expect(summarizer.callCount).toBeGreaterThan(0);
      for (const [turn, marks] of [
        [2, ["✓", "·"]],
        [3, ["✓", "✓"]],
      ] as const) {
        const seen = received(model, turn);
        expect(seen.at(-1)!.split("\n").slice(0, 5).join("\n")).toBe(view([...marks]));
        expect(seen.filter((m) => m.startsWith("Current plan"))).toHaveLength(1);
        // A summary never carries the plan view (it quotes facts the user never wrote).
        expect(seen.filter((m) => m.includes("kept by langgraph-replan"))).toHaveLength(1);
      }
      expect(out.status).toBe("completed");
    });
});

describe("planMiddleware: calls to a step that cannot run are bounded", () => {
  const waitPlan = {
    steps: [
      { id: "get", goal: "Get it", tool: "get", produces: ["x"] },
      { id: "use", goal: "Use it", tool: "use", dependsOn: ["get"], inputs: ["x"] },
    ],
  };
  const tools = (l: ReturnType<typeof ledger>) => [
    countedTool(l, "get", () => {
      throw Object.assign(new Error("not found"), { status: 404 });
    }),
    countedTool(l, "use", () => ({ ok: true })),
  ];

  it("the model calling a step that is not ready is refused policy.maxRefusedCalls times, then a person is asked (guard.refused-calls)", async () => {
    const l = ledger();
    const early = [{ name: "use", args: {} }];
    const turns: Turn[] = [[{ name: "write_plan", args: waitPlan }], ...Array.from({ length: 30 }, () => early)];
    const { agent, model } = agentWith(turns, tools(l), { policy: { maxRefusedCalls: 3 } });
    const out = await agent.invoke(start, config("refused"));
    expect(model.received.length).toBe(4);
    expect(l.calls).toEqual({});
    expect(out.decisions.map((d) => [d.rule, d.stepId, d.action])).toEqual([
      ["guard.refused-calls", "use", "escalate"],
    ]);
    expect(out.decisions[0]!.reason).toBe(
      'the model called step "use" 3 times while it could not run (step "use" is not ready: it waits for get); ' +
        "policy.maxRefusedCalls is 3",
    );
    expect(out.status).toBe("awaiting_human");
    expect((out.__interrupt__![0]!.value as { rule: string }).rule).toBe("guard.refused-calls");
  });

  it("the default bound is 5 refused calls", async () => {
    const l = ledger();
    const early = [{ name: "use", args: {} }];
    const turns: Turn[] = [[{ name: "write_plan", args: waitPlan }], ...Array.from({ length: 30 }, () => early)];
    const { agent, model } = agentWith(turns, tools(l));
    const out = await agent.invoke(start, config("refused-default"));
    expect(model.received.length).toBe(6);
    expect(out.decisions.map((d) => d.rule)).toEqual(["guard.refused-calls"]);
  });
});

describe("planMiddleware: write_plan steps carry their arguments", () => {
  it("the write_plan schema the model reads offers args on a step (and on its fallback)", () => {
    const schema = z.toJSONSchema(writePlanTool.schema as z.ZodType) as unknown as {
      properties: { steps: { items: { properties: Record<string, { description?: string }> } } };
    };
    const step = schema.properties.steps.items.properties;
    expect(Object.keys(step)).toContain("args");
    expect(step.args!.description).toBe(
      "The tool's arguments for this step; the call runs with them (facts named in inputs are added)",
    );
  });

  it("a revision that searches the web instead of the journal with the same tool is progress, and its call runs with the step's args", async () => {
    const l = ledger();
    const search = countedTool(l, "search", (_n, a) => {
      if (a.source === "journal") throw new AssumptionBrokenError("in_journal", "the journal has no such article");
      return { hits: 3, source: a.source };
    });
    const v1 = {
      assumptions: [{ id: "in_journal", statement: "the journal has the article" }],
      steps: [
        { id: "find", goal: "Find it", tool: "search", args: { source: "journal" }, assumptions: ["in_journal"] },
      ],
    };
    const v2 = {
      steps: [{ id: "find", goal: "Find it", tool: "search", args: { source: "web" }, produces: ["hits"] }],
    };
    const turns: Turn[] = [
      [{ name: "write_plan", args: v1 }],
      [{ name: "search", args: { q: "replanning" } }],
      [{ name: "write_plan", args: v2 }],
      [{ name: "search", args: { q: "replanning" } }],
      "3 hits",
    ];
    const { agent } = agentWith(turns, [search]);
    const out = await agent.invoke(start, config("revise-args"));
    expect(out.decisions.map((d) => d.rule)).toEqual(["assumption.replan-local"]);
    expect(out.plan!.version).toBe(2);
    expect(l.calls).toEqual({ search: 2 });
    expect(out.steps.find).toMatchObject({ status: "succeeded", output: { hits: 3, source: "web" } });
    expect(out.status).toBe("completed");
  });
});

describe("planMiddleware: custom stream events, as the graph sends them", () => {
  it("streams the plan, each attempt, its decisions and the steps' ends", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "fetch_rate", (n) => {
        if (n === 1) throw new TransientError("rate service busy");
        return { rate: 2 };
      }),
      countedTool(l, "convert", () => ({ total: 200 })),
    ];
    const plan = {
      steps: [
        { id: "rate", goal: "Fetch the rate", tool: "fetch_rate", produces: ["rate"] },
        { id: "total", goal: "Convert", tool: "convert", dependsOn: ["rate"], inputs: ["rate"] },
      ],
    };
    const turns: Turn[] = [
      [{ name: "write_plan", args: plan }],
      [{ name: "fetch_rate", args: {} }],
      [{ name: "convert", args: { amount: 100 } }],
      "200",
    ];
    const { agent } = agentWith(turns, tools);
    const events: PlanEvent[] = [];
    for await (const e of await agent.stream(start, { ...config("events"), streamMode: "custom" }))
      events.push(e as PlanEvent);
    expect(events.map((e) => brief(e))).toEqual([
      "plan v1 rate,total",
      "step_started rate #1 fetch_rate",
      "decision rate transient.retry",
      "step_started rate #2 fetch_rate",
      "step_finished rate succeeded #2",
      "step_started total #1 convert",
      "step_finished total succeeded #1",
      "finished completed",
    ]);
    expect(events.at(-1)).toEqual({
      type: "finished",
      status: "completed",
      summary: "2 of 2 steps succeeded (plan v1)",
    });
  });
});

function brief(e: PlanEvent): string {
  switch (e.type) {
    case "plan":
      return `plan v${e.version} ${e.steps.map((s) => s.id).join(",")}`;
    case "step_started":
      return `step_started ${e.stepId} #${e.attempt} ${e.tool}`;
    case "step_finished":
      return `step_finished ${e.stepId} ${e.status} #${e.attempt}`;
    case "decision":
      return `decision ${e.decision.stepId} ${e.decision.rule}`;
    case "finished":
      return `finished ${e.status}`;
    default:
      return e.type;
  }
}

// The middleware's events are the graph's: every one it sends is a PlanEvent.
expectTypeOf<AgentEvent>().toExtend<PlanEvent>();

describe("planMiddleware: the status a thread ends with", () => {
  it("an agent that answers without writing a plan ends completed, not planning", async () => {
    const { agent } = agentWith(["Nothing to do"], []);
    const out = await agent.invoke(start, config("no-plan"));
    expect(out.status).toBe("completed");
  });

  it("an agent that stops with plan steps undone ends partial, not running", async () => {
    const l = ledger();
    const tools = [countedTool(l, "a", () => ({ x: 1 })), countedTool(l, "b", () => ({ y: 1 }))];
    const plan = {
      steps: [
        { id: "a", goal: "A", tool: "a" },
        { id: "b", goal: "B", tool: "b", dependsOn: ["a"] },
      ],
    };
    const { agent } = agentWith([[{ name: "write_plan", args: plan }], [{ name: "a", args: {} }], "done early"], tools);
    const out = await agent.invoke(start, config("stopped-short"));
    expect(out.status).toBe("partial");
  });
});

describe("planMiddleware: write_plan refuses what the graph's planner is refused", () => {
  it("two identical unlabelled side-effecting calls in one plan are refused (duplicate_operation)", async () => {
    const l = ledger();
    const pay = countedTool(l, "pay", () => ({ paid: true }));
    const twice = {
      steps: [
        { id: "pay1", goal: "Pay", tool: "pay", args: { amount: 5 } },
        { id: "pay2", goal: "Pay again", tool: "pay", args: { amount: 5 } },
      ],
    };
    const { agent, model } = agentWith([[{ name: "write_plan", args: twice }], "ok"], [pay], {
      sideEffectTools: ["pay"],
    });
    const out = await agent.invoke(start, config("duplicate"));
    expect(out.plan).toBeUndefined();
    const reply = received(model, 1).at(-1)!;
    expect(reply).toContain('steps "pay1" and "pay2" make the same side-effecting call');
    expect(reply.startsWith("The plan was not recorded:")).toBe(true);
  });

  it("a goal over LIMITS.maxGoalLength is cut to it, and says so", async () => {
    const { agent } = agentWith(["ok"], []);
    const long = "x".repeat(LIMITS.maxGoalLength + 10);
    const out = await agent.invoke({ messages: [{ role: "user", content: long }] }, config("long-goal"));
    expect(out.goal).toHaveLength(LIMITS.maxGoalLength);
    expect(out.goal.endsWith(" … [cut: 16010 characters, over the 16000-character goal limit]")).toBe(true);
  });
});
