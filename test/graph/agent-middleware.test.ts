import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { planMiddleware } from "../../src/middleware/index.js";
import { userView } from "../../src/views/index.js";
import { AssumptionBrokenError, isPlanManagerError, PermanentError, TransientError } from "../../src/errors.js";
import { lastResults, received, scriptedAgentModel, type Turn } from "../helpers/agent-model.js";
import { countedTool, ledger, type Ledger } from "../helpers/agent-tools.js";

const noWait = { sleep: async () => {}, now: () => 0 };

function agentWith(turns: Turn[], tools: ReturnType<typeof countedTool>[], options = {}) {
  const model = scriptedAgentModel(turns);
  const agent = createAgent({
    model,
    tools,
    middleware: [planMiddleware({ ...noWait, ...options })],
    checkpointer: new MemorySaver(),
  });
  return { model, agent };
}

const start = { messages: [{ role: "user", content: "Ship order 7" }] };

/** Stock is 0: the assumption that it is in stock is false once it is checked. */
function orderWorld(l: Ledger) {
  return [
    countedTool(l, "check_stock", () => ({ stock: 0 })),
    countedTool(l, "reserve", () => ({ reserved: true })),
    countedTool(l, "backorder", () => ({ reserved: true })),
    countedTool(l, "ship", () => ({ shipment: "S-1" })),
  ];
}

const orderPlan = {
  assumptions: [{ id: "in_stock", statement: "the item is in stock", check: "facts.stock > 0" }],
  steps: [
    { id: "check", goal: "Check stock", tool: "check_stock", produces: ["stock"] },
    { id: "reserve", goal: "Reserve the item", tool: "reserve", dependsOn: ["check"], assumptions: ["in_stock"] },
    { id: "ship", goal: "Ship", tool: "ship", dependsOn: ["reserve"], produces: ["shipment"] },
  ],
};

const backorderPlan = {
  steps: [
    { id: "check", goal: "Check stock", tool: "check_stock", produces: ["stock"] },
    { id: "backorder", goal: "Backorder the item", tool: "backorder", dependsOn: ["check"] },
    { id: "ship", goal: "Ship", tool: "ship", dependsOn: ["backorder"], produces: ["shipment"] },
  ],
};

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
      // When it was observed, on the agent's clock (what a step's freshFor measures).
      observedAt: new Date(0).toISOString(),
    });
    expect(out.facts.total!.value).toBe(108);
    expect(out.decisions.map((d) => [d.seq, d.stepId, d.rule, d.delayMs])).toEqual([
      [1, "rate", "transient.retry", 200],
    ]);
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

describe("planMiddleware options", () => {
  it("an invalid option fails at construction, naming the field", () => {
    const error = (() => {
      try {
        planMiddleware({ policy: { maxReplans: -1 } });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(isPlanManagerError(error) && [error.code, error.path]).toEqual(["invalid_options", "policy.maxReplans"]);
    expect(() => planMiddleware({ sideEffectTools: "pay" } as never)).toThrow(/^planMiddleware sideEffectTools: /);
    // `tools` takes names or the tools themselves; anything else is refused.
    expect(() => planMiddleware({ tools: [42] } as never)).toThrow(/^planMiddleware tools\.0: /);
    expect(() => planMiddleware({ tools: [{ invoke: () => 1 }] } as never)).toThrow(/^planMiddleware tools\.0: /);
    expect(() => planMiddleware({ tools: ["pay", countedTool(ledger(), "find", () => 1)] })).not.toThrow();
  });
});

describe("planMiddleware: the ladder inside the agent loop", () => {
  it("switches to a step's fallback tool when its tool fails for good; the model sees one result", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "quote_a", () => {
        throw new PermanentError("quote service A retired");
      }),
      countedTool(l, "quote_b", () => ({ price: 12 })),
    ];
    const plan = {
      steps: [
        { id: "price", goal: "Get a price", tool: "quote_a", produces: ["price"], fallback: { tool: "quote_b" } },
      ],
    };
    const { agent, model } = agentWith(
      [[{ name: "write_plan", args: plan }], [{ name: "quote_a", args: { item: "x" } }], "12"],
      tools,
    );
    const out = await agent.invoke(start, config("fallback"));
    expect(l.calls).toEqual({ quote_a: 1, quote_b: 1 });
    expect(out.decisions.map((d) => [d.rule, d.action])).toEqual([["deterministic.fallback", "fallback"]]);
    expect(out.steps.price).toMatchObject({ status: "succeeded", attempts: 2, usedFallback: true });
    expect(out.facts.price!.value).toBe(12);
    expect(lastResults(model.received[2]!).map((m) => [m.name, m.content, m.status])).toEqual([
      ["quote_a", '{"price":12}', "success"],
    ]);
  });

  it("a broken assumption asks for a write_plan revision naming it, the affected steps and the trusted facts", async () => {
    const l = ledger();
    const { agent, model } = agentWith(
      [
        [{ name: "write_plan", args: orderPlan }],
        [{ name: "check_stock", args: {} }],
        // A typical agent carries on with the plan it had: the call is refused without running.
        [{ name: "reserve", args: {} }],
        [{ name: "write_plan", args: backorderPlan }],
        [{ name: "backorder", args: {} }],
        [{ name: "ship", args: {} }],
        "Shipped as a backorder",
      ],
      orderWorld(l),
    );
    const out = await agent.invoke(start, config("assumption"));
    const results = (n: number) => lastResults(model.received[n]!).map((m) => m.content);
    expect(results(2)).toEqual([
      [
        'Step "check" did not go as planned: assumption "in_stock" is false: assumption "in_stock" (the item is in ' +
          'stock) is false after step "check": check "facts.stock > 0".',
        'Assumption "in_stock" (the item is in stock) is false.',
        "Affected steps, to be replaced: reserve, ship.",
        "Facts still trusted: stock.",
        'Revise the plan: call write_plan with the whole plan, replacing the affected steps. No step may rest on "in_stock" again. Completed steps are kept and do not run again.',
      ].join("\n"),
    ]);
    expect(results(3)).toEqual([
      'Not run: step "reserve" rests on assumption "in_stock", which is false: revise the plan with write_plan.',
    ]);
    expect(results(4)).toEqual([
      "Plan version 2 recorded: 3 steps.\nNew steps: backorder.\nReady now: backorder (backorder).",
    ]);
    expect(l.calls).toEqual({ check_stock: 1, backorder: 1, ship: 1 });
    expect(out.status).toBe("completed");
    expect(out.decisions.map((d) => [d.stepId, d.rule, d.brokenAssumption])).toEqual([
      ["check", "assumption.replan-local", "in_stock"],
    ]);
    expect(out.replans).toEqual([
      {
        trigger: out.decisions[0]!.reason,
        brokenAssumption: "in_stock",
        scope: "local",
        fromVersion: 1,
        toVersion: 2,
        invalidatedSteps: ["reserve"],
        preservedSteps: ["check"],
        newSteps: ["backorder"],
        changedSteps: ["ship"],
        facts: { trusted: ["stock"], suspect: [], invalidated: [] },
        at: "1970-01-01T00:00:00.000Z",
      },
    ]);
    expect(out.planRun.falsified).toEqual(["in_stock"]);
    expect(out.plan!.version).toBe(2);
  });

  it("refuses an identical failing call without running it (guard.no-progress) and asks a person", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "fetch_doc", (n) => {
        if (n === 1) throw new AssumptionBrokenError("doc_public", "the document is private");
        return { doc: "text" };
      }),
    ];
    const plan = {
      assumptions: [{ id: "doc_public", statement: "the document is public" }],
      steps: [
        { id: "fetch", goal: "Fetch the document", tool: "fetch_doc", produces: ["doc"], assumptions: ["doc_public"] },
      ],
    };
    const call = [{ name: "fetch_doc", args: { url: "u" } }];
    const { agent, model } = agentWith([[{ name: "write_plan", args: plan }], call, call, call, "done"], tools);
    const first = await agent.invoke(start, config("repeat"));
    expect(l.calls).toEqual({ fetch_doc: 1 });
    expect(first.decisions.map((d) => [d.rule, d.action])).toEqual([
      ["assumption.replan-local", "replan_local"],
      ["guard.no-progress", "escalate"],
    ]);
    const question = first.__interrupt__![0]!.value as Record<string, unknown>;
    expect(question).toEqual({
      actionRequests: [
        {
          name: "fetch_doc",
          args: { url: "u" },
          description:
            'Step "fetch" needs a person: the identical call fetch_doc {"url":"u"} already failed for step "fetch" ' +
            "(the document is private); it was not run again [guard.no-progress]. Approve another try, edit the " +
            "call, or reject.",
        },
      ],
      reviewConfigs: [{ actionName: "fetch_doc", allowedDecisions: ["approve", "edit", "reject"] }],
      kind: "escalation",
      rule: "guard.no-progress",
      planVersion: 1,
      stepId: "fetch",
    });
    expect(model.received.length).toBe(3);
    // HITL's vocabulary answers it; the person's approval outranks the false assumption for this step.
    const out = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config("repeat"));
    expect(l.calls).toEqual({ fetch_doc: 2 });
    expect(out.decisions.map((d) => [d.rule, d.by])).toEqual([
      ["assumption.replan-local", undefined],
      ["guard.no-progress", undefined],
      ["human.retry", "person"],
    ]);
    expect(out.steps.fetch).toMatchObject({ status: "succeeded", attempts: 2, retryBase: 1 });
    expect(out.status).toBe("completed");
  });

  it("a deterministic failure on no assumption interrupts; { action: 'approve' } gives another round", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "send_report", (n) => {
        if (n === 1) throw Object.assign(new Error("recipient unknown"), { status: 404 });
        return { sent: true };
      }),
    ];
    const plan = { steps: [{ id: "send", goal: "Send the report", tool: "send_report" }] };
    const call = [{ name: "send_report", args: { to: "ops" } }];
    const { agent } = agentWith([[{ name: "write_plan", args: plan }], call, call, "sent"], tools);
    const first = await agent.invoke(start, config("escalate"));
    expect(first.decisions.map((d) => [d.rule, d.evidence])).toEqual([
      ["deterministic.escalate", "deterministic.http-4xx"],
    ]);
    expect((first.__interrupt__![0]!.value as { kind: string }).kind).toBe("escalation");
    expect(first.status).toBe("awaiting_human");
    expect(userView(first)).toEqual(["✗ Send the report", "Waiting for a person to review."]);
    const out = await agent.invoke(new Command({ resume: { action: "approve" } }), config("escalate"));
    expect(l.calls).toEqual({ send_report: 2 });
    expect(out.status).toBe("completed");
  });

  it("reject at an escalation tells the model, and the call does not run", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "send_report", () => {
        throw new PermanentError("mailbox full");
      }),
    ];
    const plan = { steps: [{ id: "send", goal: "Send the report", tool: "send_report" }] };
    const { agent, model } = agentWith(
      [[{ name: "write_plan", args: plan }], [{ name: "send_report", args: {} }], "I could not send it"],
      tools,
    );
    await agent.invoke(start, config("reject"));
    const resume = { decisions: [{ type: "reject", message: "not today" }] };
    const out = await agent.invoke(new Command({ resume }), config("reject"));
    expect(l.calls).toEqual({ send_report: 1 });
    expect(out.decisions.at(-1)).toMatchObject({ rule: "human.reject-call", by: "person", stepId: "send" });
    expect(received(model, 2).at(-1)).toContain(
      'a person refused step "send": not today. Revise the plan with write_plan, or finish and report.',
    );
  });

  it("an unreadable answer asks the same question again, saying what was wrong", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "send_report", (n) => {
        if (n === 1) throw new PermanentError("x");
        return { ok: true };
      }),
    ];
    const plan = { steps: [{ id: "send", goal: "Send", tool: "send_report" }] };
    const call = [{ name: "send_report", args: {} }];
    const { agent } = agentWith([[{ name: "write_plan", args: plan }], call, call, "ok"], tools);
    await agent.invoke(start, config("bad-answer"));
    const again = await agent.invoke(new Command({ resume: { yes: 1 } }), config("bad-answer"));
    const question = again.__interrupt__![0]!.value as { kind: string; error: string };
    expect(question.kind).toBe("escalation");
    expect(question.error).toMatch(
      /^planMiddleware: unreadable answer; expected \{ decisions: \[\{ type: "approve" \}\] \}/,
    );
    expect(l.calls).toEqual({ send_report: 1 });
    const out = await agent.invoke(new Command({ resume: { action: "approve" } }), config("bad-answer"));
    expect(out.status).toBe("completed");
  });
});

describe("planMiddleware: plan review, revisions and side effects", () => {
  const payPlan = {
    steps: [
      { id: "quote", goal: "Get the amount", tool: "quote", produces: ["amount"] },
      { id: "pay", goal: "Pay the invoice", tool: "pay", dependsOn: ["quote"], inputs: ["amount"] },
    ],
  };
  const payTools = (l: Ledger) => [
    countedTool(l, "quote", () => ({ amount: 40 })),
    countedTool(l, "pay", (_n, args) => ({ paid: args.amount })),
  ];

  it("reviewPlan interrupts on the first plan with the whole plan; an edit replaces it", async () => {
    const l = ledger();
    const { agent } = agentWith(
      [[{ name: "write_plan", args: payPlan }], [{ name: "quote", args: {} }], "quoted"],
      payTools(l),
      { reviewPlan: true, sideEffectTools: ["pay"] },
    );
    const first = await agent.invoke(start, config("review"));
    expect(first.plan).toBeUndefined();
    const question = first.__interrupt__![0]!.value as {
      kind: string;
      actionRequests: { name: string; args: unknown }[];
    };
    expect(question.kind).toBe("plan_review");
    expect(question.actionRequests[0]).toMatchObject({ name: "write_plan", args: payPlan });
    const edited = { steps: [payPlan.steps[0]] };
    const resume = { decisions: [{ type: "edit", editedAction: { name: "write_plan", args: edited } }] };
    const out = await agent.invoke(new Command({ resume }), config("review"));
    expect(out.plan!.steps.map((s) => s.id)).toEqual(["quote"]);
    expect(out.decisions.map((d) => [d.rule, d.by, d.reason])).toEqual([
      ["human.approve-plan", "person", "a person edited and approved the plan"],
    ]);
    expect(out.status).toBe("completed");
  });

  it("a rejected first plan is not adopted and the model is asked for another", async () => {
    const l = ledger();
    const { agent, model } = agentWith([[{ name: "write_plan", args: payPlan }], "ok"], payTools(l), {
      reviewPlan: true,
    });
    await agent.invoke(start, config("review-reject"));
    const resume = { decisions: [{ type: "reject", message: "pay by card" }] };
    const out = await agent.invoke(new Command({ resume }), config("review-reject"));
    expect(out.plan).toBeUndefined();
    expect(out.decisions.map((d) => d.rule)).toEqual(["human.reject-plan"]);
    expect(lastResults(model.received[1]!)[0]!.content).toBe(
      "a person rejected the plan: pay by card. Write another with write_plan.",
    );
  });

  it("side-effecting tools get the graph's idempotency key; a committed call is never run again", async () => {
    const l = ledger();
    const { agent, model } = agentWith(
      [
        [{ name: "write_plan", args: payPlan }],
        [{ name: "quote", args: {} }],
        [{ name: "pay", args: {} }],
        // A typical agent that is unsure pays again: the middleware answers with the recorded result.
        [{ name: "pay", args: {} }],
        "paid",
      ],
      payTools(l),
      { sideEffectTools: ["pay"] },
    );
    const out = await agent.invoke(start, config("pay-1"));
    expect(l.calls).toEqual({ quote: 1, pay: 1 });
    expect(l.keys.pay).toEqual([out.sideEffects[0]!.idempotencyKey]);
    expect(out.sideEffects).toEqual([
      {
        stepId: "pay",
        idempotencyKey: expect.stringMatching(/^pay-1:[0-9a-f]{16}$/),
        at: "1970-01-01T00:00:00.000Z",
        output: { paid: 40 },
      },
    ]);
    expect(l.keys.quote).toEqual([undefined]);
    expect(out.plan!.steps[1]).toMatchObject({ sideEffects: ["pay"], idempotent: false });
    expect(lastResults(model.received[4]!)[0]!.content).toBe(
      'Step "pay" already succeeded (not run again); its result: {"paid":40}',
    );
  });

  it("a revision keeps a committed side effect as it was, even when the draft changes or drops it", async () => {
    const l = ledger();
    const revised = {
      steps: [
        { id: "quote", goal: "Get the amount", tool: "quote", produces: ["amount"] },
        { id: "notify", goal: "Tell the customer", tool: "notify", dependsOn: ["quote"] },
      ],
    };
    const { agent, model } = agentWith(
      [
        [{ name: "write_plan", args: payPlan }],
        [{ name: "quote", args: {} }],
        [{ name: "pay", args: {} }],
        [{ name: "write_plan", args: revised }],
        [{ name: "notify", args: {} }],
        "done",
      ],
      [...payTools(l), countedTool(l, "notify", () => ({ sent: true }))],
      { sideEffectTools: ["pay"] },
    );
    // Dropping a committed effect with no compensate asks a person first; approved, it stands.
    const asked = await agent.invoke(start, config("keep"));
    expect((asked.__interrupt__![0]!.value as { rule: string }).rule).toBe("compensate.missing");
    const out = await agent.invoke(new Command({ resume: { action: "approve" } }), config("keep"));
    expect(out.plan!.steps.map((s) => s.id)).toEqual(["pay", "quote", "notify"]);
    expect(out.steps.pay!.status).toBe("succeeded");
    expect(lastResults(model.received[4]!)[0]!.content).toBe(
      [
        "Plan version 2 recorded: 3 steps.",
        "New steps: notify.",
        "Kept as they were (their side effects are committed and never run twice): pay.",
        "Ready now: notify (notify).",
      ].join("\n"),
    );
    expect(l.calls).toEqual({ quote: 1, pay: 1, notify: 1 });
    expect(out.status).toBe("completed");
  });

  it("a revision that adds a side-effecting tool no earlier version used waits for a person (guard.new-capability)", async () => {
    const l = ledger();
    const tools = [...orderWorld(l), countedTool(l, "refund", () => ({ refunded: true }))];
    const refundPlan = {
      steps: [
        { id: "check", goal: "Check stock", tool: "check_stock", produces: ["stock"] },
        { id: "refund", goal: "Refund the customer", tool: "refund", dependsOn: ["check"] },
      ],
    };
    const { agent } = agentWith(
      [
        [{ name: "write_plan", args: orderPlan }],
        [{ name: "check_stock", args: {} }],
        [{ name: "write_plan", args: refundPlan }],
        [{ name: "refund", args: {} }],
        "refunded",
      ],
      tools,
      { sideEffectTools: ["refund"] },
    );
    const held = await agent.invoke(start, config("capability"));
    expect(held.plan!.version).toBe(1);
    const question = held.__interrupt__![0]!.value as { kind: string; rule: string };
    expect([question.kind, question.rule]).toEqual(["plan_review", "guard.new-capability"]);
    const out = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config("capability"));
    expect(out.decisions.map((d) => d.rule)).toEqual([
      "assumption.replan-local",
      "guard.new-capability",
      "human.approve-replan",
    ]);
    expect(out.plan!.version).toBe(2);
    expect(l.calls.refund).toBe(1);
  });

  it("a revision proposing the same steps again is no progress; past maxReplans none is taken", async () => {
    const l = ledger();
    // The same tools and dependencies, with the false assumption merely left out: not progress.
    const untagged = { steps: orderPlan.steps.map(({ assumptions: _a, ...s }) => s) };
    const another = {
      steps: [...backorderPlan.steps, { id: "notify", goal: "Notify", tool: "ship", dependsOn: ["ship"] }],
    };
    const { agent, model } = agentWith(
      [
        [{ name: "write_plan", args: orderPlan }],
        [{ name: "check_stock", args: {} }],
        [{ name: "write_plan", args: untagged }],
        [{ name: "write_plan", args: backorderPlan }],
        [{ name: "write_plan", args: another }],
        "stop",
      ],
      orderWorld(l),
      { policy: { maxReplans: 1 } },
    );
    const held = await agent.invoke(start, config("guards"));
    expect((held.__interrupt__![0]!.value as { rule: string }).rule).toBe("guard.no-progress");
    const resume = { decisions: [{ type: "reject", message: "find another way" }] };
    const out = await agent.invoke(new Command({ resume }), config("guards"));
    expect(out.plan!.version).toBe(2);
    expect(out.decisions.map((d) => [d.rule, d.by])).toEqual([
      ["assumption.replan-local", undefined],
      ["guard.no-progress", undefined],
      ["human.reject-replan", "person"],
      ["guard.max-replans", undefined],
    ]);
    expect(out.decisions[3]!.reason).toBe("1 revisions already (policy.maxReplans = 1)");
    expect(lastResults(model.received[5]!)[0]!.content).toBe(
      "The plan was not revised: 1 revisions already (policy.maxReplans = 1). Finish with what is done, or stop and report.",
    );
  });
});

describe("planMiddleware: side by side, exhausted retries, a restarted process", () => {
  it("two ready steps called in one turn both run; their decisions are numbered as they land", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "left", (n) => {
        if (n === 1) throw new TransientError("busy");
        return { a: 1 };
      }),
      countedTool(l, "right", (n) => {
        if (n === 1) throw new TransientError("busy");
        return { b: 2 };
      }),
    ];
    const plan = {
      steps: [
        { id: "l", goal: "Left", tool: "left", produces: ["a"] },
        { id: "r", goal: "Right", tool: "right", produces: ["b"] },
      ],
    };
    const both = [
      { name: "left", args: {} },
      { name: "right", args: {} },
    ];
    const { agent } = agentWith([[{ name: "write_plan", args: plan }], both, "both done"], tools);
    const out = await agent.invoke(start, config("side-by-side"));
    expect(out.decisions.map((d) => d.seq)).toEqual([1, 2]);
    expect(out.decisions.map((d) => d.stepId).sort()).toEqual(["l", "r"]);
    expect([out.facts.a!.value, out.facts.b!.value]).toEqual([1, 2]);
    expect(out.status).toBe("completed");
  });

  it("retries run out on a step that rests on no assumption: a person is asked (exhausted.escalate)", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "flaky", () => {
        throw new TransientError("still busy");
      }),
    ];
    const plan = { steps: [{ id: "f", goal: "Flaky", tool: "flaky", retry: { maxAttempts: 2, backoff: "none" } }] };
    const { agent } = agentWith([[{ name: "write_plan", args: plan }], [{ name: "flaky", args: {} }], "x"], tools);
    const out = await agent.invoke(start, config("exhausted"));
    expect(l.calls).toEqual({ flaky: 2 });
    expect(out.decisions.map((d) => d.rule)).toEqual(["transient.retry", "exhausted.escalate"]);
    expect((out.__interrupt__![0]!.value as { rule: string; stepId: string }).rule).toBe("exhausted.escalate");
  });

  it("a question survives the process: a new agent on the same checkpointer answers it", async () => {
    const checkpointer = new MemorySaver();
    const build = (turns: Turn[]) =>
      createAgent({
        model: scriptedAgentModel(turns),
        tools: rateTools(0).tools,
        middleware: [planMiddleware({ ...noWait, reviewPlan: true })],
        checkpointer,
      });
    const first = await build([[{ name: "write_plan", args: ratePlan }]]).invoke(start, config("restart"));
    expect((first.__interrupt__![0]!.value as { kind: string }).kind).toBe("plan_review");
    // A fresh middleware has seen no model call yet: the plan's own tools are trusted for validation.
    const out = await build(["planned"]).invoke(new Command({ resume: { action: "approve" } }), config("restart"));
    expect(out.plan!.version).toBe(1);
    expect(out.plan!.steps.map((s) => s.id)).toEqual(["rate", "total"]);
    expect(out.decisions.map((d) => [d.rule, d.by])).toEqual([["human.approve-plan", "person"]]);
  });
});

describe("planMiddleware: skips", () => {
  it("an optional step that fails for good is skipped with its dependents, and the run still completes", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "enrich", () => {
        throw new PermanentError("enrichment service gone");
      }),
      countedTool(l, "summarize", () => ({ text: "t" })),
      countedTool(l, "core", () => ({ ok: true })),
    ];
    const plan = {
      steps: [
        { id: "enrich", goal: "Enrich", tool: "enrich", optional: true },
        { id: "summary", goal: "Summarize", tool: "summarize", dependsOn: ["enrich"] },
        { id: "core", goal: "Core work", tool: "core" },
      ],
    };
    const { agent } = agentWith(
      [[{ name: "write_plan", args: plan }], [{ name: "enrich", args: {} }], [{ name: "core", args: {} }], "done"],
      tools,
    );
    const out = await agent.invoke(start, config("optional"));
    expect(out.decisions.map((d) => d.rule)).toEqual(["optional.skip"]);
    expect(out.steps.enrich).toMatchObject({ status: "skipped", skipReason: "optional_failed" });
    expect(out.steps.summary).toEqual({ status: "skipped", attempts: 0, skipReason: "dependency_skipped" });
    expect(l.calls).toEqual({ enrich: 1, core: 1 });
    expect(out.status).toBe("completed");
  });
});

describe("planMiddleware: side-effecting calls outside the plan", () => {
  const quotePlan = { steps: [{ id: "quote", goal: "Get the amount", tool: "quote", produces: ["amount"] }] };
  const payPlan = {
    steps: [
      ...quotePlan.steps,
      { id: "pay", goal: "Pay", tool: "pay", dependsOn: ["quote"], inputs: ["amount"], produces: ["paid"] },
    ],
  };
  const payCall = [{ name: "pay", args: { iban: "XX00 ATTACKER" } }];

  it("a side-effecting call outside every plan step is refused and recorded; planned with write_plan it is reviewed and keyed (guard.unplanned-side-effect)", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "quote", () => ({ amount: 40 })),
      countedTool(l, "pay", (_n, args) => ({ paid: args.amount })),
    ];
    const { agent, model } = agentWith(
      [
        // Before any plan, then outside the plan: neither call runs.
        payCall,
        [{ name: "write_plan", args: quotePlan }],
        [{ name: "quote", args: {} }],
        payCall,
        [{ name: "write_plan", args: payPlan }],
        payCall,
        "paid",
      ],
      tools,
      { reviewPlan: true, sideEffectTools: ["pay"] },
    );
    const approve = new Command({ resume: { decisions: [{ type: "approve" }] } });
    const first = await agent.invoke(start, config("unplanned"));
    expect((first.__interrupt__![0]!.value as { kind: string }).kind).toBe("plan_review");
    const second = await agent.invoke(approve, config("unplanned"));
    expect(l.calls).toEqual({ quote: 1 });
    expect(second.sideEffects).toEqual([]);
    const results = (n: number) => lastResults(model.received[n]!).map((m) => [m.content, m.status]);
    expect(results(1)).toEqual([
      [
        "Not run: pay has side effects and there is no plan yet. Write the plan with write_plan first; a step " +
          "for pay runs under its idempotency key.",
        "error",
      ],
    ]);
    expect(results(4)).toEqual([
      [
        "Not run: pay has side effects and no step of the plan calls it. Add a step for it with write_plan; " +
          "it runs as that step, under its idempotency key.",
        "error",
      ],
    ]);
    // The revision that plans it waits for a person, as reviewPlan promises.
    const question = second.__interrupt__![0]!.value as { kind: string; rule: string };
    expect([question.kind, question.rule]).toEqual(["plan_review", "guard.new-capability"]);
    const out = await agent.invoke(approve, config("unplanned"));
    expect(l.calls).toEqual({ quote: 1, pay: 1 });
    expect(l.keys.pay).toEqual([out.sideEffects[0]!.idempotencyKey]);
    expect(out.sideEffects.map((e) => e.stepId)).toEqual(["pay"]);
    expect(out.decisions.map((d) => [d.rule, d.action, d.stepId, d.planVersion])).toEqual([
      ["guard.unplanned-side-effect", "escalate", undefined, 0],
      ["human.approve-plan", "approve", undefined, 0],
      ["guard.unplanned-side-effect", "escalate", undefined, 1],
      ["guard.new-capability", "escalate", undefined, 1],
      ["human.approve-replan", "replan_global", undefined, 1],
    ]);
    expect(out.decisions[2]!.reason).toBe(
      'pay has side effects and no step of plan version 1 calls it: {"iban":"XX00 ATTACKER"} was not run',
    );
    expect(out.status).toBe("completed");
  });

  it("a tool not listed in sideEffectTools still runs untouched outside the plan", async () => {
    const l = ledger();
    const tools = [countedTool(l, "quote", () => ({ amount: 40 })), countedTool(l, "lookup", () => ({ ok: 1 }))];
    const { agent } = agentWith(
      [[{ name: "write_plan", args: quotePlan }], [{ name: "lookup", args: {} }], "ok"],
      tools,
      { sideEffectTools: ["pay"] },
    );
    const out = await agent.invoke(start, config("free-read"));
    expect(l.calls).toEqual({ lookup: 1 });
    expect(out.decisions).toEqual([]);
  });
});

describe("planMiddleware: budget.maxCost and replanCooldownSteps", () => {
  it("a plan whose steps cannot fit budget.maxCost is not recorded; the cheaper one runs (budget.replan-cheaper)", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "courier", () => ({ sent: "courier" })),
      countedTool(l, "post", () => ({ sent: "post" })),
    ];
    const dear = { steps: [{ id: "send", goal: "Send the parcel", tool: "courier", cost: 5 }] };
    const cheap = { steps: [{ id: "send_post", goal: "Send the parcel by post", tool: "post", cost: 0.4 }] };
    const { agent, model } = agentWith(
      [
        [{ name: "write_plan", args: dear }],
        [{ name: "write_plan", args: cheap }],
        [{ name: "post", args: {} }],
        "sent",
        "nothing more to send",
      ],
      tools,
      { policy: { budget: { maxCost: 1 } } },
    );
    const out = await agent.invoke(start, config("budget"));
    expect(l.calls).toEqual({ post: 1 });
    expect(out.decisions.map((d) => [d.stepId, d.rule, d.failureClass, d.action, d.planVersion])).toEqual([
      [undefined, "budget.replan-cheaper", "budget_exhausted", "replan_global", 0],
    ]);
    expect(lastResults(model.received[1]!)[0]!.content).toBe(
      "The plan was not recorded: plan version 1 costs 5 for the steps not yet done (send 5); 0 of 1 is spent, " +
        "so it would exceed budget.maxCost. Write a cheaper plan with write_plan.",
    );
    expect(out.plan!.steps.map((s) => s.id)).toEqual(["send_post"]);
    expect(out.budget).toEqual({ spent: 0.4, replanSpent: 0, maxCost: 1 });
    expect(out.steps.send_post).toMatchObject({ status: "succeeded", attempts: 1, cost: 0.4 });
    expect(out.status).toBe("completed");
    // A new message on the thread keeps what was spent.
    const next = await agent.invoke({ messages: [{ role: "user", content: "Anything else?" }] }, config("budget"));
    expect(next.budget).toEqual({ spent: 0.4, replanSpent: 0, maxCost: 1 });
  });

  it("a step whose attempt would pass what is left of budget.maxCost does not run; the agent is asked for a cheaper route", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "quote", (n) => {
        if (n === 1) throw new TransientError("busy");
        return { amount: 40 };
      }),
      countedTool(l, "courier", () => ({ sent: "courier" })),
    ];
    // Fits when written (0.5 + 0.5), but the quote's retry spends what the courier needed.
    const plan = {
      steps: [
        { id: "quote", goal: "Quote", tool: "quote", cost: 0.5 },
        { id: "send", goal: "Send", tool: "courier", cost: 0.5, dependsOn: ["quote"] },
      ],
    };
    const { agent, model } = agentWith(
      [[{ name: "write_plan", args: plan }], [{ name: "quote", args: {} }], [{ name: "courier", args: {} }], "stopped"],
      tools,
      { policy: { budget: { maxCost: 1 } } },
    );
    const out = await agent.invoke(start, config("budget-step"));
    expect(l.calls).toEqual({ quote: 2 });
    expect(out.decisions.map((d) => [d.stepId, d.rule, d.attempt])).toEqual([
      ["quote", "transient.retry", 1],
      ["send", "budget.replan-cheaper", 0],
    ]);
    expect(out.decisions[1]!.reason).toBe(
      'step "send" costs 0.5; 1 of 1 is spent, so it would exceed budget.maxCost; asking the planner for a cheaper route',
    );
    expect(lastResults(model.received[3]!)[0]!.content).toContain(
      'Step "send" did not go as planned: step "send" costs 0.5; 1 of 1 is spent',
    );
    expect(out.budget.spent).toBe(1);
    expect(out.steps.quote).toMatchObject({ status: "succeeded", attempts: 2, cost: 1 });
  });

  it("retries are charged per attempt: the attempt that would pass budget.maxCost does not start", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "flaky", () => {
        throw new TransientError("busy");
      }),
    ];
    const plan = { steps: [{ id: "f", goal: "Flaky", tool: "flaky", cost: 0.4 }] };
    const { agent } = agentWith([[{ name: "write_plan", args: plan }], [{ name: "flaky", args: {} }], "x"], tools, {
      policy: { budget: { maxCost: 1 } },
    });
    const out = await agent.invoke(start, config("budget-retries"));
    expect(l.calls).toEqual({ flaky: 2 });
    expect(out.decisions.map((d) => [d.rule, d.attempt])).toEqual([
      ["transient.retry", 1],
      ["transient.retry", 2],
      ["budget.replan-cheaper", 2],
    ]);
    expect(out.budget.spent).toBe(0.8);
    expect(out.steps.f).toMatchObject({ status: "failed", attempts: 2, cost: 0.8 });
  });

  it("the same assumption is not replanned again before a step has succeeded (guard.replan-cooldown)", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "read_level", () => ({ level: 1 })),
      countedTool(l, "act_a", () => ({ done: "a" })),
      countedTool(l, "act_b", () => ({ done: "b" })),
      countedTool(l, "act_c", () => ({ done: "c" })),
    ];
    const version = (act: string) => ({
      assumptions: [{ id: "fresh", statement: "the cached level is current" }],
      steps: [
        { id: "get", goal: "Read the level", tool: "read_level", produces: ["level"], assumptions: ["fresh"] },
        { id: `use_${act}`, goal: "Act", tool: act, dependsOn: ["get"], preconditions: ["facts.level > 5"] },
      ],
    });
    const { agent } = agentWith(
      [
        [{ name: "write_plan", args: version("act_a") }],
        [{ name: "read_level", args: {} }],
        [{ name: "act_a", args: {} }],
        [{ name: "write_plan", args: version("act_b") }],
        [{ name: "act_b", args: {} }],
        [{ name: "write_plan", args: version("act_c") }],
        [{ name: "act_c", args: {} }],
        "stuck",
      ],
      tools,
    );
    const out = await agent.invoke(start, config("cooldown"));
    expect(out.decisions.map((d) => [d.stepId, d.rule, d.action])).toEqual([
      ["use_act_a", "precondition.replan-producers", "replan_local"],
      ["use_act_b", "guard.replan-cooldown", "escalate"],
    ]);
    expect(out.decisions[1]!.reason).toContain(
      'assumption "fresh" was just replanned and no step has succeeded since (policy.replanCooldownSteps = 1)',
    );
    expect((out.__interrupt__![0]!.value as { kind: string; rule: string }).rule).toBe("guard.replan-cooldown");
    expect(l.calls).toEqual({ read_level: 1 });
  });
});

describe("planMiddleware: keys name the operation", () => {
  it("a payment that succeeds but proves an assumption false is recorded: the revision's same payment reuses it", async () => {
    const l = ledger();
    const tools = [
      countedTool(l, "pay", () => ({ paid: true, fee: 50 })),
      countedTool(l, "notify", () => ({ ok: true })),
    ];
    const v1 = {
      assumptions: [{ id: "cheap", statement: "fees are low", check: "facts.fee < 10" }],
      steps: [
        { id: "pay", goal: "Pay the supplier", tool: "pay", produces: ["fee"] },
        { id: "notify", goal: "Notify", tool: "notify", dependsOn: ["pay"], assumptions: ["cheap"] },
      ],
    };
    const v2 = { steps: [{ id: "pay2", goal: "Pay the supplier", tool: "pay" }] };
    const { agent } = agentWith(
      [
        [{ name: "write_plan", args: v1 }],
        [{ name: "pay", args: { amount: 120 } }],
        [{ name: "write_plan", args: v2 }],
        [{ name: "pay", args: { amount: 120 } }],
        "done",
      ],
      tools,
      { sideEffectTools: ["pay"] },
    );
    const out = await agent.invoke(start, config("reuse-broken"));
    expect(l.calls).toEqual({ pay: 1 });
    expect(out.sideEffects.map((e) => e.stepId)).toEqual(["pay"]);
    expect(out.decisions.map((d) => [d.stepId, d.rule])).toEqual([
      ["pay", "assumption.replan-local"],
      ["pay2", "effect.reused"],
    ]);
  });

  it("a second step making the committed call again reuses its result: one charge, one key (effect.reused)", async () => {
    const l = ledger();
    const tools = [countedTool(l, "pay", (_n, args) => ({ paid: args.amount }))];
    const plan = {
      steps: [
        { id: "deposit", goal: "Pay the deposit", tool: "pay", produces: ["paid"] },
        { id: "settle", goal: "Settle the balance", tool: "pay", dependsOn: ["deposit"] },
      ],
    };
    const { agent, model } = agentWith(
      [
        [{ name: "write_plan", args: plan }],
        [{ name: "pay", args: { amount: 40, step: "deposit" } }],
        [{ name: "pay", args: { amount: 40, step: "settle" } }],
        "done",
      ],
      tools,
      { sideEffectTools: ["pay"] },
    );
    const out = await agent.invoke(start, config("reuse"));
    expect(l.calls).toEqual({ pay: 1 });
    expect(out.sideEffects.map((e) => e.stepId)).toEqual(["deposit"]);
    expect(out.steps.settle).toMatchObject({ status: "succeeded", output: { paid: 40 } });
    expect(out.decisions.map((d) => [d.stepId, d.rule, d.action])).toEqual([["settle", "effect.reused", "reuse"]]);
    const results = lastResults(model.received[3]!).map((m) => m.content);
    expect(results).toEqual(['{"paid":40}']);
    expect(out.status).toBe("completed");
  });
});
