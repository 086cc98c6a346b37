/**
 * Side effects inside createAgent (docs/decisions/0043-effects-in-the-middleware.md): a
 * `sideEffectTools` call goes through the effect journal of the agent's checkpointer, and a call cut
 * before it answered is settled as in the graph — never a silent second call. The process dies inside
 * the call in these tests: the tool does its effect, then its task ends without an answer (it pauses
 * the graph, which leaves what a kill leaves: the intent in the journal, no result, the call pending
 * in the checkpoint). A new agent, with a new middleware, on the same checkpointer carries on.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command, interrupt, MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createAgent } from "langchain";
import { afterAll, describe, expect, it } from "vitest";
import { planMiddleware, type PlanMiddlewareOptions } from "../../src/middleware/index.js";
import { PermanentError } from "../../src/errors.js";
import { scriptedAgentModel, type Turn } from "../helpers/agent-model.js";
import { countedTool, ledger, type Ledger } from "../helpers/agent-tools.js";

const noWait = { sleep: async () => {}, now: () => 0 };
const start = { messages: [{ role: "user", content: "Pay invoice 7" }] };
const config = { configurable: { thread_id: "pay-7" } };

const payPlan = (extra: Record<string, unknown> = {}) => ({
  steps: [
    { id: "pay", goal: "Pay the invoice", tool: "charge", args: { amount: 40 }, produces: ["receipt"], ...extra },
  ],
});

/** The payment provider: a charge (the first one dies inside the call when `dies`) and a lookup of charges. */
function provider(l: Ledger, dies: boolean, found: unknown = { happened: false }) {
  return [
    countedTool(l, "charge", (n) => {
      if (dies && n === 1) interrupt("the process dies inside the call");
      return { receipt: `R-${n}` };
    }),
    countedTool(l, "find_charge", () => found),
  ];
}

function agent(
  turns: Turn[],
  tools: ReturnType<typeof countedTool>[],
  checkpointer: BaseCheckpointSaver,
  options: PlanMiddlewareOptions = {},
) {
  return createAgent({
    model: scriptedAgentModel(turns),
    tools,
    middleware: [planMiddleware({ ...noWait, sideEffectTools: ["charge"], ...options })],
    checkpointer,
  });
}

/** The first process: it writes the plan and dies inside the charge. */
async function diesInTheCharge(l: Ledger, saver: BaseCheckpointSaver, plan = payPlan(), options = {}) {
  const first = agent(
    [[{ name: "write_plan", args: plan }], [{ name: "charge", args: { amount: 40 } }], "never reached"],
    provider(l, true),
    saver,
    options,
  );
  await first.invoke(start, config);
  expect(l.calls).toEqual({ charge: 1 });
}

const rules = (out: { decisions: { rule: string }[] }) => out.decisions.map((d) => d.rule);
const resume = (value: unknown) => new Command({ resume: value });

describe("a side-effecting call inside createAgent cut by a crash", () => {
  it("a tool that honours keys (effects.honoursKeys) is called again under the same key, once", async () => {
    const l = ledger();
    const saver = new MemorySaver();
    const options = { effects: { honoursKeys: ["charge"] } };
    await diesInTheCharge(l, saver, payPlan(), options);
    const out = await agent(["paid"], provider(l, false), saver, options).invoke(resume("restarted"), config);
    expect(l.calls).toEqual({ charge: 2 });
    expect(l.keys.charge).toEqual([out.sideEffects[0]!.idempotencyKey, out.sideEffects[0]!.idempotencyKey]);
    expect(out.sideEffects.map((e) => e.output)).toEqual([{ receipt: "R-2" }]);
    expect([out.status, out.steps.pay!.status, rules(out)]).toEqual(["completed", "succeeded", ["effect.recalled"]]);
  });

  it("a step's verify probe settles it: it happened, its output is recorded, the tool is not called again", async () => {
    const l = ledger();
    const saver = new MemorySaver();
    const plan = payPlan({ verify: { tool: "find_charge", args: { invoice: 7 } } });
    await diesInTheCharge(l, saver, plan);
    const found = { happened: true, output: { receipt: "R-1" } };
    // The tools themselves: the new process probes before any model call, under the call's key.
    const tools = provider(l, false, found);
    const out = await agent(["paid"], tools, saver, { tools }).invoke(resume("restarted"), config);
    expect(l.calls).toEqual({ charge: 1, find_charge: 1 });
    expect(l.keys.find_charge).toEqual([l.keys.charge![0]]);
    expect(out.steps.pay).toMatchObject({ status: "succeeded", output: { receipt: "R-1" } });
    expect(out.sideEffects.map((e) => [e.idempotencyKey, e.output])).toEqual([[l.keys.charge![0], { receipt: "R-1" }]]);
    expect(rules(out)).toEqual(["effect.verified"]);
  });

  it("neither: a person is asked (effect.in-doubt); retry makes exactly one more call under the key", async () => {
    const l = ledger();
    const saver = new MemorySaver();
    await diesInTheCharge(l, saver);
    const second = agent(
      // The first model call comes after the person's answer.
      [[{ name: "charge", args: { amount: 40 } }], "paid"],
      provider(l, false),
      saver,
    );
    const asked = await second.invoke(resume("restarted"), config);
    expect(l.calls).toEqual({ charge: 1 });
    const question = asked.__interrupt__![0]!.value as Record<string, unknown>;
    expect(question).toMatchObject({
      kind: "escalation",
      rule: "effect.in-doubt",
      stepId: "pay",
      options: ["happened", "retry", "abort"],
    });
    expect(rules(asked)).toEqual(["effect.in-doubt"]);
    const out = await second.invoke(resume({ action: "retry" }), config);
    expect(l.calls).toEqual({ charge: 2 });
    expect(l.keys.charge).toEqual([l.keys.charge![0], l.keys.charge![0]]);
    expect(rules(out)).toEqual(["effect.in-doubt", "human.effect-retry"]);
    expect([out.status, out.sideEffects.map((e) => e.output)]).toEqual(["completed", [{ receipt: "R-2" }]]);
  });

  it("a person's retry on a fork, whose call in doubt another branch numbered higher, makes exactly one call", async () => {
    const l = ledger();
    const saver = new MemorySaver();
    // The charge dies inside its first two calls; the third answers.
    const dying = () => [
      countedTool(l, "charge", (n) => {
        if (n <= 2) interrupt("the process dies inside the call");
        return { receipt: `R-${n}` };
      }),
    ];
    await diesInTheCharge(l, saver);
    const main = agent([[{ name: "charge", args: { amount: 40 } }], "paid"], dying(), saver);
    await main.invoke(resume("restarted"), config);
    await main.invoke(resume({ action: "retry" }), config);
    expect(l.calls).toEqual({ charge: 2 });
    const asked = await main.invoke(resume("restarted"), config);
    expect(rules(asked)).toEqual(["effect.in-doubt", "human.effect-retry", "effect.in-doubt"]);
    let before: { config: typeof config } | undefined;
    for await (const snapshot of main.graph.getStateHistory(config)) {
      const last = (snapshot.values as { messages: { tool_calls?: { name: string }[] }[] }).messages.at(-1);
      if (snapshot.next.includes("tools") && last?.tool_calls?.[0]?.name === "charge") before = snapshot as never;
    }
    expect(before).toBeDefined();
    // The model's first call comes after the person's answer.
    const fork = agent([[{ name: "charge", args: { amount: 40 } }], "paid"], dying(), saver);
    const forked = await fork.invoke(null, before!.config);
    expect([rules(forked).at(-1), l.calls]).toEqual(["effect.in-doubt", { charge: 2 }]);
    const out = await fork.invoke(resume({ action: "retry" }), config);
    expect(l.calls).toEqual({ charge: 3 });
    expect(l.keys.charge).toEqual(Array(3).fill(l.keys.charge![0]));
    expect([out.status, out.sideEffects.map((e) => e.output)]).toEqual(["completed", [{ receipt: "R-3" }]]);
  });

  it("happened records the output a person gives, checked like the tool's; the tool is not called again", async () => {
    const l = ledger();
    const saver = new MemorySaver();
    await diesInTheCharge(l, saver);
    const second = agent(["paid"], provider(l, false), saver);
    await second.invoke(resume("restarted"), config);
    // No receipt in it: the step produces `receipt`, so it is not an answer; the question is asked again.
    const again = await second.invoke(resume({ action: "happened", output: { ok: true } }), config);
    expect((again.__interrupt__![0]!.value as { error?: string }).error).toMatch(
      /^planMiddleware: the output given for step "pay" fails its checks: /,
    );
    const out = await second.invoke(resume({ action: "happened", output: { receipt: "R-1" } }), config);
    expect(l.calls).toEqual({ charge: 1 });
    expect(out.steps.pay).toMatchObject({ status: "succeeded", output: { receipt: "R-1" } });
    expect(out.facts.receipt!.value).toBe("R-1");
    expect(out.sideEffects.map((e) => [e.idempotencyKey, e.output])).toEqual([[l.keys.charge![0], { receipt: "R-1" }]]);
    expect([out.status, rules(out)]).toEqual(["completed", ["effect.in-doubt", "human.effect-happened"]]);
  });

  it("a model's plan cannot claim its tool honours keys: the claim is dropped, and a person is asked", async () => {
    const l = ledger();
    const saver = new MemorySaver();
    await diesInTheCharge(l, saver, payPlan({ honoursIdempotencyKey: true }));
    const asked = await agent(["never reached"], provider(l, false), saver).invoke(resume("restarted"), config);
    expect(l.calls).toEqual({ charge: 1 });
    expect(asked.plan!.steps[0]!.honoursIdempotencyKey).toBeUndefined();
    expect(rules(asked)).toEqual(["effect.in-doubt"]);
  });

  it("abort ends the run; nothing is called again", async () => {
    const l = ledger();
    const saver = new MemorySaver();
    await diesInTheCharge(l, saver);
    const second = agent(["never reached"], provider(l, false), saver);
    await second.invoke(resume("restarted"), config);
    const out = await second.invoke(resume({ action: "abort", reason: "call the bank first" }), config);
    expect(l.calls).toEqual({ charge: 1 });
    expect([out.status, rules(out)]).toEqual(["aborted", ["effect.in-doubt", "human.abort"]]);
  });
});

describe("a side-effecting call cut by the tool's own reset", () => {
  it("is in doubt at once: not retried by the ladder, a person is asked", async () => {
    const l = ledger();
    const reset = countedTool(l, "charge", () => {
      throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    });
    const a = agent(
      [[{ name: "write_plan", args: payPlan({ retry: { maxAttempts: 3 } }) }], [{ name: "charge", args: {} }], "?"],
      [reset],
      new MemorySaver(),
    );
    const out = await a.invoke(start, config);
    expect(l.calls).toEqual({ charge: 1 });
    expect(rules(out)).toEqual(["effect.in-doubt"]);
  });
});

describe("the journal on SQLite", () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-effects-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a new process on the same file finds the intent in doubt, asks, and retry calls once more", async () => {
    const file = join(dir, "agent.db");
    const l = ledger();
    await diesInTheCharge(l, SqliteSaver.fromConnString(file));
    // A new process: a new saver on the file, a new agent and middleware.
    const saver = SqliteSaver.fromConnString(file);
    const second = agent([[{ name: "charge", args: { amount: 40 } }], "paid"], provider(l, false), saver);
    const asked = await second.invoke(resume("restarted"), config);
    expect((asked.__interrupt__![0]!.value as { rule: string }).rule).toBe("effect.in-doubt");
    const out = await second.invoke(resume({ action: "retry" }), config);
    expect(l.calls).toEqual({ charge: 2 });
    expect([out.status, out.sideEffects.map((e) => e.output)]).toEqual(["completed", [{ receipt: "R-2" }]]);
    // The journal is a table in the agent's file: the key's result is there.
    const db = (saver as unknown as { db: { prepare: (sql: string) => { all: () => unknown[] } } }).db;
    const rows = db.prepare("SELECT key, result FROM langgraph_replan_effects").all();
    expect(rows).toEqual([
      { key: l.keys.charge![0], result: JSON.stringify({ ok: true, output: { receipt: "R-2" } }) },
    ]);
  });
});

describe("a revision that drops a step whose effect committed", () => {
  /** A flight and a hotel booked for the wrong dates; each booking can be cancelled. */
  function travel(l: Ledger, cancelled: string[]) {
    return [
      countedTool(l, "book_flight", (_n, args) => ({ flight: `F-${String(args.date)}` })),
      countedTool(l, "book_hotel", (_n, args) => ({ hotel: `H-${String(args.date)}` })),
      countedTool(l, "cancel", (_n, args) => {
        cancelled.push(String(args.flight ?? args.hotel));
        return { cancelled: true };
      }),
    ];
  }
  /** The undo reads the booking the step produced (its fact), whatever happened to the plan since. */
  const undo = (fact: string) => ({ tool: "cancel", inputs: [fact] });
  const v1 = {
    steps: [
      { id: "flight", goal: "Book the flight", tool: "book_flight", args: { date: "05-01" }, produces: ["flight"] },
      { id: "hotel", goal: "Book the hotel", tool: "book_hotel", args: { date: "05-01" }, produces: ["hotel"] },
    ],
  };
  const withUndo = {
    steps: [
      { ...v1.steps[0]!, compensate: undo("flight") },
      { ...v1.steps[1]!, compensate: undo("hotel") },
    ],
  };
  /** The dates were wrong: both bookings are replaced by ones for the 2nd. */
  const v2 = {
    steps: [
      { id: "flight2", goal: "Book the flight", tool: "book_flight", args: { date: "05-02" }, produces: ["flight"] },
      { id: "hotel2", goal: "Book the hotel", tool: "book_hotel", args: { date: "05-02" }, produces: ["hotel"] },
    ],
  };
  const effects = { sideEffectTools: ["book_flight", "book_hotel", "cancel"] };
  const bookedThenRevised: Turn[] = [
    [{ name: "book_flight", args: {} }],
    [{ name: "book_hotel", args: {} }],
    [{ name: "write_plan", args: v2 }],
    [{ name: "book_flight", args: {} }],
    [{ name: "book_hotel", args: {} }],
    "booked",
  ];

  it("runs each compensate once, latest commit first, under <key>:compensate, recorded like the graph's", async () => {
    const l = ledger();
    const cancelled: string[] = [];
    const a = agent(
      [[{ name: "write_plan", args: withUndo }], ...bookedThenRevised],
      travel(l, cancelled),
      new MemorySaver(),
      effects,
    );
    const out = await a.invoke(start, config);
    expect(cancelled).toEqual(["H-05-01", "F-05-01"]);
    const [flightKey, hotelKey] = out.sideEffects.map((e) => e.idempotencyKey);
    expect(l.keys.cancel).toEqual([`${hotelKey}:compensate`, `${flightKey}:compensate`]);
    expect(out.compensations!.map((c) => [c.stepId, c.idempotencyKey, c.compensationKey, c.status])).toEqual([
      ["hotel", hotelKey, `${hotelKey}:compensate`, "done"],
      ["flight", flightKey, `${flightKey}:compensate`, "done"],
    ]);
    expect(out.decisions.map((d) => [d.stepId, d.rule])).toEqual([
      ["hotel", "compensate.run"],
      ["flight", "compensate.run"],
    ]);
    // The undone steps left the plan; the new bookings were made once each.
    expect(out.plan!.steps.map((s) => s.id)).toEqual(["flight2", "hotel2"]);
    expect(l.calls).toEqual({ book_flight: 2, book_hotel: 2, cancel: 2 });
    expect(out.status).toBe("completed");
  });

  it("a step with no compensate: a person is asked (compensate.missing) before the revision is recorded", async () => {
    const l = ledger();
    const cancelled: string[] = [];
    const saver = new MemorySaver();
    const a = agent([[{ name: "write_plan", args: v1 }], ...bookedThenRevised], travel(l, cancelled), saver, effects);
    const asked = await a.invoke(start, config);
    expect(asked.__interrupt__![0]!.value).toMatchObject({ kind: "plan_review", rule: "compensate.missing" });
    expect([asked.plan!.version, asked.compensations]).toEqual([1, undefined]);
    expect(asked.decisions.map((d) => d.rule)).toEqual([]);
    const out = await a.invoke(resume({ action: "approve" }), config);
    expect(out.decisions.map((d) => d.rule)).toEqual(["compensate.missing", "human.approve-replan"]);
    // Let stand: recorded as waived, kept in the plan as they were; nothing cancelled.
    expect(out.compensations!.map((c) => [c.stepId, c.status])).toEqual([
      ["hotel", "waived"],
      ["flight", "waived"],
    ]);
    expect(out.plan!.steps.map((s) => s.id)).toEqual(["flight", "hotel", "flight2", "hotel2"]);
    expect([cancelled, out.plan!.version]).toEqual([[], 2]);
  });

  it("an undo that keeps failing is retried per the step's retry policy, then a person is asked (compensate.failed)", async () => {
    const l = ledger();
    const failing = countedTool(l, "cancel", () => {
      throw new PermanentError("the hotel's system is down");
    });
    const [flight, hotel] = withUndo.steps;
    const plan = { steps: [flight, { ...hotel!, retry: { maxAttempts: 2, backoff: "none" } }] };
    const [bookFlight, bookHotel] = travel(l, []);
    const a = agent(
      [[{ name: "write_plan", args: plan }], ...bookedThenRevised],
      [bookFlight!, bookHotel!, failing],
      new MemorySaver(),
      effects,
    );
    const first = await a.invoke(start, config);
    // The hotel's undo twice (its retry policy), then a person is asked before the model's next call.
    expect([first.__interrupt__![0]!.value, l.calls.cancel]).toMatchObject([
      { rule: "compensate.failed", stepId: "hotel" },
      2,
    ]);
    const second = await a.invoke(resume({ action: "skip" }), config);
    // The flight's three times (the default policy's); the hotel's is not called again as the hook runs again.
    expect([second.__interrupt__![0]!.value, l.calls.cancel]).toMatchObject([
      { rule: "compensate.failed", stepId: "flight" },
      5,
    ]);
    const out = await a.invoke(resume({ action: "skip" }), config);
    expect(out.compensations!.map((c) => [c.stepId, c.status, c.attempts])).toEqual([
      ["hotel", "waived", 2],
      ["flight", "waived", 3],
    ]);
    expect(out.decisions.map((d) => [d.stepId, d.rule])).toEqual([
      ["hotel", "compensate.failed"],
      ["hotel", "human.skip"],
      ["flight", "compensate.failed"],
      ["flight", "human.skip"],
    ]);
    expect([l.calls.cancel, out.plan!.steps.map((s) => s.id)]).toEqual([5, ["flight2", "hotel2"]]);
  });

  it("rejected, the revision is not recorded", async () => {
    const l = ledger();
    const a = agent(
      [[{ name: "write_plan", args: v1 }], ...bookedThenRevised.slice(0, 3), "stopping"],
      travel(l, []),
      new MemorySaver(),
      effects,
    );
    await a.invoke(start, config);
    const out = await a.invoke(resume({ action: "reject", reason: "keep the bookings" }), config);
    expect(out.decisions.map((d) => d.rule)).toEqual(["compensate.missing", "human.reject-replan"]);
    expect([out.plan!.version, out.compensations, l.calls]).toEqual([1, undefined, { book_flight: 1, book_hotel: 1 }]);
  });
});
