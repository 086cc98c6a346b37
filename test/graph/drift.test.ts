/**
 * Assumption drift (docs/decisions/0041-evidence-freshness-and-drift.md): an assumption's watcher, a read-only
 * tool, is called before each step resting on the assumption starts (at most once per `everyMs` of the run's
 * clock); a false check falsifies the assumption with the watcher's output as evidence, and the ladder replans
 * (`assumption.drift`) before the step runs. A watcher that throws falsifies nothing.
 */
import { Command } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { describe, expect, it } from "vitest";
import { staticPlanner, TransientError, type PlanDraft, type ReplanRequest } from "../../src/index.js";
import { DEFAULT_RETRY, validatePlan } from "../../src/policy/index.js";
import { operatorView } from "../../src/views/index.js";
import { z } from "zod";
import { LlmPlanAnswerSchema, LlmPlanDraftSchema, toPlanDraft } from "../../src/planners/llm-schema.js";
import { PLANNER_SYSTEM_PROMPT } from "../../src/planners/prompt-texts.js";
import { RUN_CONTROL, type RunRequest } from "../../src/runtime/run-control.js";
import { watchTimeoutMs, WATCH_RETRY_AFTER_FAILURE_MS } from "../../src/policy/trust/watch.js";
import { harness, scriptedTool, type Harness, type Loose } from "../helpers/graph.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();

/** A market whose price moves to 130 while `prepare` runs; `buy` commits a purchase; `price` only reads. */
function market(watcher: "ok" | "throws" = "ok") {
  const m = { price: 100, h: undefined as Harness | undefined };
  const price = scriptedTool("price", [
    watcher === "throws" ? new TransientError("quote service busy (503)") : () => ({ price: m.price }),
  ]);
  const prepare = scriptedTool("prepare", [
    () => {
      m.price = 130;
      m.h?.clock.advance(30_000);
      return { ready: true };
    },
  ]);
  const buy = scriptedTool("buy", [(args: Record<string, unknown>) => ({ bought: true, limit: args.limit })], {
    sideEffects: ["buys shares"],
  });
  return { m, price, prepare, buy, tools: [price, prepare, buy] };
}

const watched = (everyMs?: number) => ({
  id: "price_ok",
  statement: "the price stays at or under 120",
  watch: { tool: "price", check: "output.price <= 120", ...(everyMs !== undefined ? { everyMs } : {}) },
});

const plan: PlanDraft = {
  assumptions: [watched()],
  steps: [
    { id: "prepare", goal: "Prepare the order", tool: "prepare" },
    {
      id: "buy",
      goal: "Buy at the limit",
      tool: "buy",
      args: { limit: 120 },
      dependsOn: ["prepare"],
      assumptions: ["price_ok"],
    },
  ],
};

function replanner() {
  const requests: ReplanRequest[] = [];
  const replan = (r: ReplanRequest): PlanDraft => {
    requests.push(r);
    return {
      steps: [
        { id: "buy_revised", goal: "Buy at the new price", tool: "buy", args: { limit: 130 }, dependsOn: ["prepare"] },
      ],
    };
  };
  return { requests, planner: staticPlanner({ plan, replan }) };
}

describe("assumption drift", () => {
  it("a drifting watch replans before the side-effecting step runs: the tool is never called on the stale premise", async () => {
    const w = market();
    const r = replanner();
    const h = (w.m.h = harness(r.planner, w.tools));
    const out = await h.run();
    expect(out.status).toBe("completed");
    expect(out.decisions.map((d: Loose) => [d.rule, d.action, d.stepId, d.brokenAssumption, d.evidence])).toEqual([
      ["assumption.drift", "replan_local", "buy", "price_ok", "assumption.watch-false"],
    ]);
    expect(w.buy.calls).toEqual([{ limit: 130 }]);
    expect(w.price.calls).toHaveLength(1);
    expect(out.watches).toEqual([
      {
        assumptionId: "price_ok",
        stepId: "buy",
        tool: "price",
        at: at(30_000),
        planVersion: 1,
        output: { price: 130 },
        held: false,
      },
    ]);
    expect(out.guards.falsified).toEqual(["price_ok"]);
    expect(r.requests.map((q) => [q.scope, q.brokenAssumption, q.affectedSteps.map((s) => s.id)])).toEqual([
      ["local", "price_ok", ["buy"]],
    ]);
    expect(operatorView(out as never, { now: T0 })).toContain("watches: 1 drifted (price_ok before buy)");
    expect(out.replans[0]).toMatchObject({
      trigger: expect.stringContaining('drifted before step "buy" started'),
      scope: "local",
    });
  });

  it("a watch that holds lets the step run, and is recorded", async () => {
    const w = market();
    const r = replanner();
    w.prepare.calls.length = 0;
    const calm = scriptedTool("prepare", [{ ready: true }]);
    const h = (w.m.h = harness(r.planner, [w.price, calm, w.buy]));
    const out = await h.run();
    expect(out.status).toBe("completed");
    expect(out.decisions).toEqual([]);
    expect(w.buy.calls).toEqual([{ limit: 120 }]);
    // A check that held keeps no output: only a false or unreadable check keeps its evidence.
    expect(out.watches).toEqual([
      { assumptionId: "price_ok", stepId: "buy", tool: "price", at: at(0), planVersion: 1, held: true },
    ]);
    expect(operatorView(out as never, { now: T0 })).toContain("watches: 1 held");
  });

  it("a watcher that throws is classified like a tool call and falsifies nothing: recorded, and the step proceeds", async () => {
    const w = market("throws");
    const r = replanner();
    const h = (w.m.h = harness(r.planner, w.tools));
    const out = await h.run();
    expect(out.status).toBe("completed");
    expect(out.decisions).toEqual([]);
    expect(out.guards.falsified).toEqual([]);
    expect(w.buy.calls).toEqual([{ limit: 120 }]);
    expect(out.watches).toEqual([
      {
        assumptionId: "price_ok",
        stepId: "buy",
        tool: "price",
        at: at(30_000),
        planVersion: 1,
        error: { name: "TransientError", message: "quote service busy (503)" },
        evidence: "transient.error",
      },
    ]);
    expect(operatorView(out as never, { now: T0 })).toContain("watches: 1 could not tell");
  });

  it("everyMs is honoured on the run's clock: three steps 30 s apart, watched every 60 s, call the watcher twice", async () => {
    const h: { h?: Harness } = {};
    const price = scriptedTool("price", [{ price: 100 }]);
    const tick = scriptedTool("tick", [
      () => {
        h.h!.clock.advance(30_000);
        return { ok: true };
      },
    ]);
    const rests = { tool: "tick", assumptions: ["price_ok"] };
    const draft: PlanDraft = {
      assumptions: [watched(60_000)],
      steps: [
        { id: "a", goal: "a", ...rests },
        { id: "b", goal: "b", dependsOn: ["a"], ...rests },
        { id: "c", goal: "c", dependsOn: ["b"], ...rests },
      ],
    };
    h.h = harness(draft, [price, tick]);
    const out = await h.h.run();
    expect(out.status).toBe("completed");
    expect(out.watches.map((x: Loose) => [x.stepId, x.at])).toEqual([
      ["a", at(0)],
      ["c", at(60_000)],
    ]);
    expect(price.calls).toHaveLength(2);
  });

  it("everyMs 0 (the default) watches before every step that rests on the assumption", async () => {
    const price = scriptedTool("price", [{ price: 100 }]);
    const tick = scriptedTool("tick", [{ ok: true }]);
    const rests = { tool: "tick", assumptions: ["price_ok"] };
    const draft: PlanDraft = {
      assumptions: [watched()],
      steps: [
        { id: "a", goal: "a", ...rests },
        { id: "b", goal: "b", dependsOn: ["a"], ...rests },
        { id: "free", goal: "rests on nothing", tool: "tick", dependsOn: ["b"] },
      ],
    };
    const out = await harness(draft, [price, tick]).run();
    expect(out.watches.map((x: Loose) => x.stepId)).toEqual(["a", "b"]);
  });
});

describe("a watch whatever the run's clock does", () => {
  it("everyMs 0: a clock stepped back (NTP) does not skip the watch; b2 is not bought at the drifted price", async () => {
    const m = { price: 100, h: undefined as Harness | undefined };
    const price = scriptedTool("price", [() => ({ price: m.price })]);
    const prepare = scriptedTool("prepare", [
      () => {
        m.price = 130;
        // The host's clock is corrected backwards while the step runs.
        m.h?.clock.advance(-5_000);
        return { ready: true };
      },
    ]);
    const buy = scriptedTool("buy", [(args: Record<string, unknown>) => ({ bought: args.lot })], {
      sideEffects: ["buys shares"],
    });
    const quote = scriptedTool("quote", [{ quoted: true }]);
    const draft: PlanDraft = {
      assumptions: [watched()],
      steps: [
        { id: "q1", goal: "Quote lot 1", tool: "quote", assumptions: ["price_ok"] },
        { id: "prepare", goal: "Prepare lot 2", tool: "prepare", dependsOn: ["q1"] },
        {
          id: "b2",
          goal: "Buy lot 2",
          tool: "buy",
          args: { lot: 2 },
          dependsOn: ["prepare"],
          assumptions: ["price_ok"],
        },
      ],
    };
    const replan = () => ({ steps: [{ id: "b2_later", goal: "Wait for a better price", tool: "quote" }] });
    const h = (m.h = harness(staticPlanner({ plan: draft, replan }), [price, prepare, buy, quote]));
    const out = await h.run();
    expect(buy.calls).toEqual([]);
    expect(out.watches.slice(0, 2).map((x: Loose) => [x.stepId, x.at, x.held])).toEqual([
      ["q1", at(0), true],
      ["b2", at(-5_000), false],
    ]);
    expect(out.decisions[0]).toMatchObject({ rule: "assumption.drift", stepId: "b2", brokenAssumption: "price_ok" });
  });

  it("everyMs set: a clock stepped back counts as due, not as a watch just made", async () => {
    const h: { h?: Harness } = {};
    const price = scriptedTool("price", [{ price: 100 }]);
    const back = scriptedTool("back", [
      () => {
        h.h!.clock.advance(-120_000);
        return { ok: true };
      },
    ]);
    const draft: PlanDraft = {
      assumptions: [watched(60_000)],
      steps: [
        { id: "a", goal: "a", tool: "back", assumptions: ["price_ok"] },
        { id: "b", goal: "b", tool: "back", dependsOn: ["a"], assumptions: ["price_ok"] },
      ],
    };
    h.h = harness(draft, [price, back]);
    const out = await h.h.run();
    expect(out.watches.map((x: Loose) => [x.stepId, x.at])).toEqual([
      ["a", at(0)],
      ["b", at(-120_000)],
    ]);
  });
});

describe("a watcher whose answer cannot be read", () => {
  const big = (n: number) => ({ price: 100, history: "x".repeat(n) });

  it("an answer over the 64,000-byte limit is a decision naming the limit, once per run of such answers, not silence", async () => {
    const price = scriptedTool("price", [big(70_000), big(70_000), { price: 100 }, big(70_000)]);
    const tick = scriptedTool("tick", [{ ok: true }]);
    const rests = { tool: "tick", assumptions: ["price_ok"] };
    const draft: PlanDraft = {
      assumptions: [watched()],
      steps: [
        { id: "a", goal: "a", ...rests },
        { id: "b", goal: "b", dependsOn: ["a"], ...rests },
        { id: "c", goal: "c", dependsOn: ["b"], ...rests },
        { id: "d", goal: "d", dependsOn: ["c"], ...rests },
      ],
    };
    const out = await harness(draft, [price, tick]).run();
    expect(out.status).toBe("completed");
    expect(out.watches.map((x: Loose) => [x.stepId, x.held ?? x.error?.name])).toEqual([
      ["a", "WatchCheckUnreadable"],
      ["b", "WatchCheckUnreadable"],
      ["c", true],
      ["d", "WatchCheckUnreadable"],
    ]);
    const reason =
      'watcher price of assumption "price_ok" answered over 64,000 bytes of JSON (the limit on stored evidence), ' +
      "so its check output.price <= 120 cannot read it and drift is not detected; the step starts on the " +
      "assumption as it stood. Have the watcher answer only the fields its check reads";
    expect(out.decisions.map((d: Loose) => [d.rule, d.stepId, d.failureClass, d.action, d.reason])).toEqual([
      ["assumption.watch-unreadable", "a", "unknown", "proceed", reason],
      ["assumption.watch-unreadable", "d", "unknown", "proceed", reason],
    ]);
    expect(out.watches[0].error.message).toBe(reason);
    expect(operatorView(out as never, { now: T0 })).toContain("watches: 1 held, 3 could not tell");
  });

  it("a check that cannot read the answer (a field it lacks) is a decision too", async () => {
    const price = scriptedTool("price", [{ cost: 100 }]);
    const tick = scriptedTool("tick", [{ ok: true }]);
    const draft: PlanDraft = {
      assumptions: [watched()],
      steps: [{ id: "a", goal: "a", tool: "tick", assumptions: ["price_ok"] }],
    };
    const out = await harness(draft, [price, tick]).run();
    expect(out.status).toBe("completed");
    expect(out.decisions.map((d: Loose) => [d.rule, d.action])).toEqual([["assumption.watch-unreadable", "proceed"]]);
    expect(out.decisions[0].reason).toMatch(
      /^watch check "output.price <= 120" could not be evaluated: .*; the step starts/,
    );
  });
});

describe("a watcher's bounds", () => {
  /** A watcher that never answers until its signal aborts. */
  const hanging = (name: string) => {
    const seen = { calls: 0, aborted: 0 };
    const t = scriptedTool(name, [
      (_a: Record<string, unknown>, c: unknown) => {
        seen.calls++;
        const signal = (c as { signal: AbortSignal }).signal;
        return new Promise((_, reject) =>
          signal.addEventListener("abort", () => {
            seen.aborted++;
            reject(new Error("aborted"));
          }),
        );
      },
    ]);
    return { t, seen };
  };

  it("a hanging watcher ends at its watch timeoutMs, classed transient.timeout as a tool's timeout is; the step proceeds", async () => {
    const { t, seen } = hanging("price");
    const tick = scriptedTool("tick", [{ ok: true }]);
    const draft: PlanDraft = {
      assumptions: [{ ...watched(), watch: { ...watched().watch, timeoutMs: 5 } }],
      steps: [{ id: "a", goal: "a", tool: "tick", assumptions: ["price_ok"] }],
    };
    const out = await harness(draft, [t, tick]).run();
    expect(out.status).toBe("completed");
    expect(seen).toEqual({ calls: 1, aborted: 1 });
    expect(tick.calls).toHaveLength(1);
    expect(out.watches).toEqual([
      {
        assumptionId: "price_ok",
        stepId: "a",
        tool: "price",
        at: at(0),
        planVersion: 1,
        error: { name: "StepTimeout", message: "step timed out after 5 ms" },
        evidence: "transient.timeout",
      },
    ]);
  });

  it("without timeoutMs a watcher gets the smaller of policy.defaultTimeoutMs and 30 s", async () => {
    expect(watchTimeoutMs({ tool: "p", check: "true" }, 300_000)).toBe(30_000);
    expect(watchTimeoutMs({ tool: "p", check: "true" }, 2_000)).toBe(2_000);
    expect(watchTimeoutMs({ tool: "p", check: "true", timeoutMs: 90_000 }, 2_000)).toBe(90_000);
    const { t } = hanging("price");
    const tick = scriptedTool("tick", [{ ok: true }]);
    const draft: PlanDraft = {
      assumptions: [watched()],
      steps: [{ id: "a", goal: "a", tool: "tick", assumptions: ["price_ok"], timeoutMs: 60_000 }],
    };
    const out = await harness(draft, [t, tick], { policy: { defaultTimeoutMs: 7 } }).run();
    expect(out.watches.map((x: Loose) => [x.error?.message, x.evidence])).toEqual([
      ["step timed out after 7 ms", "transient.timeout"],
    ]);
  });

  it("after a watcher fails it is not called again for WATCH_RETRY_AFTER_FAILURE_MS, even with everyMs 0", async () => {
    expect(WATCH_RETRY_AFTER_FAILURE_MS).toBe(30_000);
    const h: { h?: Harness } = {};
    const price = scriptedTool("price", [new TransientError("quote service busy (503)")]);
    const tick = scriptedTool("tick", [
      () => {
        h.h!.clock.advance(20_000);
        return { ok: true };
      },
    ]);
    const rests = { tool: "tick", assumptions: ["price_ok"] };
    const draft: PlanDraft = {
      assumptions: [watched()],
      steps: [
        { id: "a", goal: "a", ...rests },
        { id: "b", goal: "b", dependsOn: ["a"], ...rests },
        { id: "c", goal: "c", dependsOn: ["b"], ...rests },
      ],
    };
    h.h = harness(draft, [price, tick]);
    const out = await h.h.run();
    expect(out.status).toBe("completed");
    expect(tick.calls).toHaveLength(3);
    expect(out.watches.map((x: Loose) => [x.stepId, x.at, x.evidence])).toEqual([
      ["a", at(0), "transient.error"],
      ["c", at(40_000), "transient.error"],
    ]);
  });

  it("an operator stop asked during a watcher call: no further watcher is called and no step starts", async () => {
    const control = { wanted: undefined as RunRequest | undefined };
    const price = scriptedTool("price", [
      () => {
        control.wanted = { kind: "stop", stop: { requestedAt: at(0), reason: "enough" } };
        return { price: 100 };
      },
    ]);
    const quote = scriptedTool("quote", [{ ok: true }]);
    const tick = scriptedTool("tick", [{ ok: true }]);
    const draft: PlanDraft = {
      assumptions: [
        watched(),
        { id: "quote_ok", statement: "quotes flow", watch: { tool: "quote", check: "output.ok" } },
      ],
      steps: [
        { id: "a", goal: "a", tool: "tick", assumptions: ["price_ok", "quote_ok"] },
        { id: "free", goal: "rests on nothing", tool: "tick" },
      ],
    };
    const h = harness(draft, [price, quote, tick]);
    const config = { configurable: { thread_id: "t1", [RUN_CONTROL]: { wanted: () => control.wanted } } };
    await h.graph.invoke({ goal: "test goal" } as never, config);
    const out = (await h.graph.getState(config)).values;
    expect(out.status).toBe("stopped");
    expect(price.calls).toHaveLength(1);
    expect(quote.calls).toEqual([]);
    expect(tick.calls).toEqual([]);
    expect(out.watches.map((x: Loose) => [x.assumptionId, x.held])).toEqual([["price_ok", true]]);
  });
});

describe("assumption drift across a checkpoint", () => {
  it.each([
    ["30 s later: the restored record says the watch is not due", 30_000, ["a", "b"], 1],
    ["60 s later: due again", 60_000, ["a", "b"], 2],
  ])(
    "a SqliteSaver round trip keeps the watcher's records, and everyMs counts from them: %s",
    async (_what, later, started, calls) => {
      const price = scriptedTool("price", [{ price: 100 }]);
      const tick = scriptedTool("tick", [{ ok: true }]);
      const draft: PlanDraft = {
        assumptions: [watched(60_000)],
        steps: [
          { id: "a", goal: "a", tool: "tick", assumptions: ["price_ok"] },
          { id: "approve", goal: "approve", human: { prompt: "Go on?" }, dependsOn: ["a"] },
          { id: "b", goal: "b", tool: "tick", dependsOn: ["approve"], assumptions: ["price_ok"] },
        ],
      };
      const saver = SqliteSaver.fromConnString(":memory:");
      const first = harness(draft, [price, tick], { checkpointer: saver });
      expect((await first.run()).status).toBe("awaiting_human");
      // Another process on the same thread; its clock `later` ms on.
      const second = harness(draft, [price, tick], { checkpointer: saver });
      second.clock.advance(later);
      const out = await second.run(new Command({ resume: { action: "complete", output: {} } }));
      expect(out.status).toBe("completed");
      expect(tick.calls).toHaveLength(started.length);
      expect(price.calls).toHaveLength(calls);
      expect(out.watches.map((x: Loose) => [x.stepId, x.at])).toEqual(
        calls === 1
          ? [["a", at(0)]]
          : [
              ["a", at(0)],
              ["b", at(later)],
            ],
      );
    },
  );
});

describe("freshFor and watch are validated like the rest of a plan", () => {
  const ctx = {
    tools: new Set(["price", "buy", "read"]),
    sideEffectTools: new Set(["buy"]),
    policy: { defaultRetry: DEFAULT_RETRY },
  };
  const issues = (draft: unknown) => {
    const r = validatePlan(draft, ctx);
    return r.ok ? [] : r.issues.map((i) => `${i.code} ${i.path.join(".")}`);
  };
  const reader = (extra: Record<string, unknown>) => ({
    steps: [
      { id: "p", goal: "p", tool: "read", produces: ["x"] },
      { id: "s", goal: "s", tool: "read", inputs: ["x"], dependsOn: ["p"], ...extra },
    ],
  });
  const watching = (watch: Record<string, unknown>) => ({
    assumptions: [{ id: "a", statement: "s", watch }],
    steps: [{ id: "s", goal: "s", tool: "read", assumptions: ["a"] }],
  });

  it("accepts a bounded input and a read-only watcher", () => {
    expect(issues(reader({ freshFor: { x: 60_000 }, inputsFreshForMs: 1 }))).toEqual([]);
    expect(issues(watching({ tool: "price", check: "output.price <= 120", everyMs: 0 }))).toEqual([]);
  });

  it.each([
    ["NaN", Number.NaN],
    ["negative", -1],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["zero", 0],
    ["a fraction", 1.5],
  ])("refuses a %s freshness bound", (_what, ms) => {
    expect(issues(reader({ freshFor: { x: ms } }))).toEqual(["schema steps.1.freshFor.x"]);
    expect(issues(reader({ inputsFreshForMs: ms }))).toEqual(["schema steps.1.inputsFreshForMs"]);
  });

  it("refuses __proto__ (and other reserved names) as a freshFor key instead of dropping it", () => {
    expect(issues(reader({ freshFor: JSON.parse('{"__proto__": 1000}') }))).toEqual([
      "invalid_freshness steps.1.freshFor.__proto__",
    ]);
    expect(issues(reader({ freshFor: { constructor: 1000 } }))).toEqual([
      "invalid_freshness steps.1.freshFor.constructor",
    ]);
  });

  it("refuses a freshFor key that is not an input of the step", () => {
    expect(issues(reader({ freshFor: { y: 1000 } }))).toEqual(["invalid_freshness steps.1.freshFor.y"]);
  });

  it("refuses a watch tool not in the registry, a side-effecting one, and a check that is not CEL", () => {
    expect(issues(watching({ tool: "nope", check: "output.ok" }))).toEqual([
      "invalid_watch_tool assumptions.0.watch.tool",
    ]);
    expect(issues(watching({ tool: "buy", check: "output.ok" }))).toEqual([
      "invalid_watch_tool assumptions.0.watch.tool",
    ]);
    expect(issues(watching({ tool: "price", check: "output.price <=" }))).toEqual([
      "invalid_expression assumptions.0.watch.check",
    ]);
    expect(issues(watching({ tool: "price", check: "output.ok", evryMs: 5 }))).toEqual([
      "unknown_field assumptions.0.watch.evryMs",
    ]);
    expect(issues(watching({ tool: "price", check: "output.ok", everyMs: -1 }))).toEqual([
      "schema assumptions.0.watch.everyMs",
    ]);
  });

  it("accepts a watch timeoutMs like a step's, and refuses zero, a fraction and more than a day", () => {
    expect(issues(watching({ tool: "price", check: "output.ok", timeoutMs: 2_000 }))).toEqual([]);
    const refused = [0, 1.5, 86_400_001].map((timeoutMs) =>
      issues(watching({ tool: "price", check: "output.ok", timeoutMs })),
    );
    expect(refused).toEqual([
      ["schema assumptions.0.watch.timeoutMs"],
      ["schema assumptions.0.watch.timeoutMs"],
      ["too_large assumptions.0.watch.timeoutMs"],
    ]);
  });

  it("refuses a side-effecting watch tool in the graph too: the run fails before any tool runs", async () => {
    const w = market();
    const draft: PlanDraft = {
      ...plan,
      assumptions: [{ ...watched(), watch: { tool: "buy", check: "output.bought" } }],
    };
    const out = await harness(draft, w.tools).run();
    expect(out.status).toBe("failed");
    expect(out.outcome.issues.map((i: Loose) => i.code)).toEqual(["invalid_watch_tool"]);
    expect([w.buy.calls.length, w.prepare.calls.length, w.price.calls.length]).toEqual([0, 0, 0]);
  });
});

describe("llmPlanner asks for freshFor and watch", () => {
  it("reads them from a model's answer, strict-shaped or natural, into the draft", () => {
    const answer = {
      steps: [
        {
          id: "quote",
          goal: "Read the price",
          tool: "price",
          produces: ["price"],
          successSignal: "has(output.price)",
        },
        {
          id: "buy",
          goal: "Buy",
          tool: "buy",
          inputs: ["price"],
          assumptions: ["price_ok"],
          freshFor: [{ fact: "price", ms: 60_000 }],
          inputsFreshForMs: 120_000,
          successSignal: "output.bought == true",
        },
      ],
      assumptions: [
        {
          id: "price_ok",
          statement: "the price stays at or under 120",
          watch: { tool: "price", args: { symbol: "ACME" }, check: "output.price <= 120", everyMs: 30_000 },
        },
      ],
    };
    const { draft, issues } = toPlanDraft(LlmPlanAnswerSchema.parse(answer));
    expect(issues).toEqual([]);
    expect(draft.steps[1]).toMatchObject({ freshFor: { price: 60_000 }, inputsFreshForMs: 120_000 });
    expect(draft.assumptions).toEqual([
      {
        id: "price_ok",
        statement: "the price stays at or under 120",
        watch: { tool: "price", check: "output.price <= 120", args: { symbol: "ACME" }, everyMs: 30_000 },
      },
    ]);
    const schema = JSON.stringify(z.toJSONSchema(LlmPlanDraftSchema));
    expect(["freshFor", "inputsFreshForMs", "watch", "everyMs"].filter((f) => !schema.includes(`"${f}"`))).toEqual([]);
    expect(PLANNER_SYSTEM_PROMPT).toContain("freshFor lists { fact, ms }");
    expect(PLANNER_SYSTEM_PROMPT).toContain("may carry a watch: a read-only catalogue tool");
  });

  it("a __proto__ fact in the model's freshFor reaches the validator as a key, and is refused", () => {
    const { draft } = toPlanDraft(
      LlmPlanAnswerSchema.parse({
        steps: [
          { id: "p", goal: "p", tool: "read", produces: ["x"] },
          { id: "s", goal: "s", tool: "read", inputs: ["x"], freshFor: [{ fact: "__proto__", ms: 5 }] },
        ],
      }),
    );
    const r = validatePlan(draft, { tools: new Set(["read"]), policy: { defaultRetry: DEFAULT_RETRY } });
    expect(r.ok ? [] : r.issues.map((i) => i.code)).toEqual(["invalid_freshness"]);
  });
});
