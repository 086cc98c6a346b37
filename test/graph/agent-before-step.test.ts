/**
 * What planMiddleware does before a plan step's call and at a version's door beyond the parity
 * rows (docs/decisions/0053-middleware-quality-freshness-watch.md): a model that ignores a refresh
 * request cannot run the step on the stale input; a watcher that fails or cannot be read falsifies
 * nothing; `watch.everyMs` spaces the watcher's calls; a revision the quality gate would hold goes
 * back to the model first; a step done by another agent is refused (the model is the agent).
 */
import type { BaseMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { planMiddleware, type PlanMiddlewareOptions } from "../../src/middleware/index.js";
import { lastResults, scriptedAgentModel, type Turn } from "../helpers/agent-model.js";
import { countedTool, ledger, type Ledger } from "../helpers/agent-tools.js";
import { fakeClock } from "../helpers/clock.js";

type Tools = (l: Ledger, clock: ReturnType<typeof fakeClock>) => ReturnType<typeof countedTool>[];

async function run(turns: Turn[], tools: Tools, options: PlanMiddlewareOptions = {}, answers: unknown[] = []) {
  const l = ledger();
  const clock = fakeClock();
  const model = scriptedAgentModel(turns);
  const agent = createAgent({
    model,
    tools: tools(l, clock),
    middleware: [planMiddleware({ sleep: async () => {}, now: clock.now, ...options })],
    checkpointer: new MemorySaver(),
  });
  const config = { configurable: { thread_id: "t1" } };
  let out = await agent.invoke({ messages: [{ role: "user", content: "go" }] }, config);
  for (const answer of answers) out = await agent.invoke(new Command({ resume: answer }), config);
  const said = model.received.map((messages: BaseMessage[]) => lastResults(messages).map((m) => String(m.content)));
  return { l, out, said, rules: out.decisions.map((d) => d.rule) };
}

const market: Tools = (l, clock) => [
  countedTool(l, "quote", (n) => ({ price: 100 + n })),
  countedTool(l, "wait", () => {
    clock.advance(5000);
    return { waited: true };
  }),
  countedTool(l, "order", () => ({ ordered: true })),
];
const stalePlan = {
  steps: [
    { id: "fetch", goal: "Read the price", tool: "quote", produces: ["price"] },
    { id: "pause", goal: "Wait", tool: "wait", dependsOn: ["fetch"], successSignal: "output.waited" },
    {
      id: "buy",
      goal: "Order",
      tool: "order",
      dependsOn: ["pause"],
      inputs: ["price"],
      freshFor: { price: 1000 },
      successSignal: "output.ordered",
    },
  ],
};

describe("planMiddleware: evidence freshness", () => {
  it("a model that calls the step again instead of its producer is refused: the step never runs on the stale input", async () => {
    const turns: Turn[] = [
      [{ name: "write_plan", args: stalePlan }],
      [{ name: "quote", args: {} }],
      [{ name: "wait", args: {} }],
      [{ name: "order", args: {} }],
      [{ name: "order", args: {} }],
      "stop",
    ];
    const { l, out, said, rules } = await run(turns, market);
    expect(l.calls).toEqual({ quote: 1, wait: 1 });
    expect(rules).toEqual(["evidence.stale"]);
    expect(said[5]).toEqual([
      'Not run: step "buy" waits for its inputs to be observed again: call step "fetch" first.',
    ]);
    expect([out.facts.price!.label, out.steps.fetch!.status, out.planRun.backtracks]).toEqual([
      "suspect",
      "pending",
      { fetch: 1 },
    ]);
  });

  it("a model that keeps calling the waiting step is held for a person past policy.maxRefusedCalls (guard.refused-calls)", async () => {
    const turns: Turn[] = [
      [{ name: "write_plan", args: stalePlan }],
      [{ name: "quote", args: {} }],
      [{ name: "wait", args: {} }],
      [{ name: "order", args: {} }],
      [{ name: "order", args: {} }],
      "never",
    ];
    const { l, rules, out } = await run(turns, market, { policy: { maxRefusedCalls: 1 } });
    expect([l.calls, rules, out.status]).toEqual([
      { quote: 1, wait: 1 },
      ["evidence.stale", "guard.refused-calls"],
      "awaiting_human",
    ]);
  });

  it("a refresh is bounded: past policy.maxBacktracksPerStep a person is asked (guard.max-backtracks)", async () => {
    const turns: Turn[] = [
      [{ name: "write_plan", args: stalePlan }],
      [{ name: "quote", args: {} }],
      [{ name: "wait", args: {} }],
      [{ name: "order", args: {} }],
      "never",
    ];
    const { l, rules, out } = await run(turns, market, { policy: { maxBacktracksPerStep: 0 } });
    expect([l.calls, rules, out.status]).toEqual([{ quote: 1, wait: 1 }, ["guard.max-backtracks"], "awaiting_human"]);
  });
});

const stockPlan = (watch: Record<string, unknown>) => ({
  steps: [
    { id: "reserve", goal: "Reserve", tool: "reserve", assumptions: ["in_stock"], successSignal: "output.ok" },
    {
      id: "ship",
      goal: "Ship",
      tool: "ship",
      dependsOn: ["reserve"],
      assumptions: ["in_stock"],
      successSignal: "output.ok",
    },
  ],
  assumptions: [{ id: "in_stock", statement: "the part is in stock", watch: { tool: "stock", ...watch } }],
});
const shop =
  (stock: (n: number) => unknown): Tools =>
  (l, clock) => [
    countedTool(l, "stock", stock),
    countedTool(l, "reserve", () => {
      clock.advance(1000);
      return { ok: true };
    }),
    countedTool(l, "ship", () => ({ ok: true })),
  ];
const shopTurns = (watch: Record<string, unknown>): Turn[] => [
  [{ name: "write_plan", args: stockPlan(watch) }],
  [{ name: "reserve", args: {} }],
  [{ name: "ship", args: {} }],
  "done",
];

describe("planMiddleware: assumption watches", () => {
  it("a watcher that throws falsifies nothing: recorded with its evidence rule, and the step runs", async () => {
    const tools = shop(() => {
      throw new Error("stock service down");
    });
    const { l, out, rules } = await run(shopTurns({ check: "output.available" }), tools);
    expect([l.calls, rules, out.status]).toEqual([{ stock: 1, reserve: 1, ship: 1 }, [], "completed"]);
    // After a failed call the watcher waits 30 s before the next: ship started one second later, unwatched.
    expect(out.watches!.map((w) => [w.stepId, w.held, w.evidence])).toEqual([
      ["reserve", undefined, "unknown.unclassified"],
    ]);
  });

  it("a check that cannot read the watcher's answer is one decision (assumption.watch-unreadable), and the steps run", async () => {
    const { l, out, rules } = await run(
      shopTurns({ check: "output.missing.field" }),
      shop(() => ({ available: true })),
    );
    expect([l.calls, rules, out.status]).toEqual([
      { stock: 2, reserve: 1, ship: 1 },
      ["assumption.watch-unreadable"],
      "completed",
    ]);
  });

  it("watch.everyMs spaces the calls: a step within it starts on the last answer", async () => {
    const every = await run(
      shopTurns({ check: "output.available", everyMs: 60_000 }),
      shop(() => ({ available: true })),
    );
    expect([every.l.calls, every.out.watches!.map((w) => [w.stepId, w.held])]).toEqual([
      { stock: 1, reserve: 1, ship: 1 },
      [["reserve", true]],
    ]);
    const always = await run(
      shopTurns({ check: "output.available" }),
      shop(() => ({ available: true })),
    );
    expect(always.l.calls).toEqual({ stock: 2, reserve: 1, ship: 1 });
  });
});

describe("planMiddleware: the quality gate on revisions", () => {
  const tools: Tools = (l) => [
    countedTool(l, "reserve", () => ({ ok: false })),
    countedTool(l, "backorder", () => ({ ok: true })),
  ];
  const first = {
    steps: [{ id: "reserve", goal: "Reserve", tool: "reserve", assumptions: ["in_stock"], successSignal: "output.ok" }],
    assumptions: [{ id: "in_stock", statement: "the part is in stock" }],
  };
  const wide = {
    steps: [
      { id: "backorder", goal: "Backorder", tool: "backorder", assumptions: ["soon"], successSignal: "output.ok" },
    ],
    assumptions: [{ id: "soon", statement: "it comes back soon", estimate: { low: 1, high: 1000, unit: "days" } }],
  };

  it("a held revision goes back to the model once (policy.replanDraftRetries), then waits for a person (quality.hold)", async () => {
    const turns: Turn[] = [
      [{ name: "write_plan", args: first }],
      [{ name: "reserve", args: {} }],
      [{ name: "write_plan", args: wide }],
      [{ name: "write_plan", args: wide }],
      [{ name: "backorder", args: {} }],
      "done",
    ];
    const { l, out, said, rules } = await run(turns, tools, {}, [{ action: "approve" }]);
    expect(said[3]![0]).toBe(
      "The plan was not recorded: the plan quality gate would hold it for a person.\n" +
        '- quality.estimate-bounds (high): the estimate of assumption "soon" (days) is 1000× wide (1 to 1000), over policy.quality.maxSpan 100\n' +
        "Fix it and call write_plan again.",
    );
    expect(rules).toEqual(["unmet.replan-local", "quality.hold", "human.approve-replan"]);
    expect([l.calls, out.plan!.version, out.quality!.findings.map((f) => `${f.rule}@${f.planVersion}`)]).toEqual([
      { reserve: 1, backorder: 1 },
      2,
      ["quality.estimate-bounds@2"],
    ]);
  });
});

describe("planMiddleware: steps done by another agent", () => {
  it("are refused: inside createAgent the model is the agent, and each step is one of its tool calls", async () => {
    const plan = { steps: [{ id: "research", goal: "Research", agent: "researcher" }] };
    const { said, out } = await run([[{ name: "write_plan", args: plan }], "stop"], (l) => [
      countedTool(l, "search", () => ({})),
    ]);
    expect(said[1]![0]).toContain('step "research" names agent "researcher", which is not registered');
    expect(out.plan).toBeUndefined();
  });
});
