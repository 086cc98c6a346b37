/**
 * Evidence freshness (docs/decisions/0041-evidence-freshness-and-drift.md): every fact records when it was
 * observed on the run's clock; an input older than its step's `freshFor` makes the step that produced it run
 * again first (`evidence.stale`), bounded like any backtrack, or escalates when that step has side effects.
 */
import { Command } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { describe, expect, it } from "vitest";
import type { PlanDraft } from "../../src/index.js";
import { harness, scriptedTool, type Harness, type Loose } from "../helpers/graph.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();

/** `quote` reads a price (100, 101, …); each `slow` call takes 90 s of the run's clock; `use` reads the price. */
function world(options: { quoteEffects?: boolean } = {}) {
  const clock: { h?: Harness } = {};
  let price = 100;
  const quote = scriptedTool("quote", [() => ({ price: price++ })]);
  const slow = scriptedTool("slow", [
    () => {
      clock.h!.clock.advance(90_000);
      return { done: true };
    },
  ]);
  const use = scriptedTool("use", [(args: Record<string, unknown>) => ({ used: args.price })]);
  const read = {
    id: "read",
    goal: "Read the price",
    tool: "quote",
    produces: ["price"],
    ...(options.quoteEffects ? { sideEffects: ["reserves a quote"], idempotent: false } : {}),
  };
  return { clock, quote, slow, use, tools: [quote, slow, use], read };
}

const step = (id: string, tool: string, extra: Record<string, unknown> = {}) => ({ id, goal: id, tool, ...extra });

describe("evidence freshness", () => {
  it("records when each fact was observed, on the run's clock", async () => {
    const w = world();
    const plan: PlanDraft = { steps: [w.read, step("wait", "slow", { dependsOn: ["read"], produces: ["done"] })] };
    const h = (w.clock.h = harness(plan, w.tools, { context: { budget: 5 } }));
    const out = await h.run();
    expect(out.status).toBe("completed");
    expect(out.facts.budget.observedAt).toBe(at(0));
    expect(out.facts.price.observedAt).toBe(at(0));
    expect(out.facts.done.observedAt).toBe(at(90_000));
  });

  it("an input older than freshFor makes its producer run again first: evidence.stale, then the step reads the new value", async () => {
    const w = world();
    // `use` does not name `read` in dependsOn: it waits for the price being observed again all the same.
    const plan: PlanDraft = {
      steps: [
        w.read,
        step("wait", "slow", { dependsOn: ["read"] }),
        step("use", "use", { dependsOn: ["wait"], inputs: ["price"], freshFor: { price: 60_000 } }),
      ],
    };
    const h = (w.clock.h = harness(plan, w.tools));
    const out = await h.run();
    expect(out.status).toBe("completed");
    expect(out.decisions.map((d: Loose) => [d.rule, d.action, d.stepId, d.failureClass, d.evidence])).toEqual([
      ["evidence.stale", "refresh", "use", "precondition_failed", "evidence.stale-input"],
    ]);
    expect(out.decisions[0].reason).toBe(
      'input too old for step "use": price (observed 90000 ms ago by "read"; freshFor 60000 ms); "read" runs again first',
    );
    expect(w.quote.calls).toHaveLength(2);
    expect(w.slow.calls).toHaveLength(1);
    expect(w.use.calls).toEqual([{ price: 101 }]);
    expect([out.steps.read.attempts, out.steps.wait.attempts, out.steps.use.attempts]).toEqual([2, 1, 1]);
    expect(out.facts.price).toMatchObject({ value: 101, label: "trusted", observedAt: at(90_000) });
    expect(out.guards.backtracks).toEqual({ read: 1 });
  });

  it("inputsFreshForMs bounds every input; a fresh input does not backtrack", async () => {
    const w = world();
    const plan: PlanDraft = {
      steps: [
        w.read,
        step("wait", "slow", { dependsOn: ["read"] }),
        step("use", "use", { dependsOn: ["wait"], inputs: ["price"], inputsFreshForMs: 90_000 }),
      ],
    };
    const h = (w.clock.h = harness(plan, w.tools));
    const out = await h.run();
    // 90 s old, 90 s allowed: fresh.
    expect(out.decisions).toEqual([]);
    expect(w.quote.calls).toHaveLength(1);
    expect(w.use.calls).toEqual([{ price: 100 }]);
  });

  it("a stale input whose producer has side effects escalates (evidence.stale-escalate): nothing runs again", async () => {
    const w = world({ quoteEffects: true });
    const plan: PlanDraft = {
      steps: [
        w.read,
        step("wait", "slow", { dependsOn: ["read"] }),
        step("use", "use", { dependsOn: ["wait"], inputs: ["price"], freshFor: { price: 60_000 } }),
      ],
    };
    const h = (w.clock.h = harness(plan, w.tools));
    const out = await h.run();
    expect(out.status).toBe("awaiting_human");
    expect(out.decisions.map((d: Loose) => [d.rule, d.action, d.stepId])).toEqual([
      ["evidence.stale-escalate", "escalate", "use"],
    ]);
    expect(out.decisions[0].reason).toContain('"read" has side effects: running it again would repeat them');
    expect(w.quote.calls).toHaveLength(1);
    expect(w.use.calls).toEqual([]);
    expect(out.facts.price.label).toBe("trusted");
  });

  it("the backtrack bound holds: a second refresh of the same producer past maxBacktracksPerStep escalates", async () => {
    const w = world();
    const plan: PlanDraft = {
      steps: [
        w.read,
        step("wait1", "slow", { dependsOn: ["read"] }),
        step("use1", "use", { dependsOn: ["wait1"], inputs: ["price"], freshFor: { price: 60_000 } }),
        step("wait2", "slow", { dependsOn: ["use1"] }),
        step("use2", "use", { dependsOn: ["wait2"], inputs: ["price"], freshFor: { price: 60_000 } }),
      ],
    };
    const h = (w.clock.h = harness(plan, w.tools, { policy: { maxBacktracksPerStep: 1 } }));
    const out = await h.run();
    expect(out.status).toBe("awaiting_human");
    expect(out.decisions.map((d: Loose) => [d.rule, d.action, d.stepId])).toEqual([
      ["evidence.stale", "refresh", "use1"],
      ["guard.max-backtracks", "escalate", "use2"],
    ]);
    expect(w.quote.calls).toHaveLength(2);
    expect(w.use.calls).toEqual([{ price: 101 }]);
    expect(out.guards.backtracks).toEqual({ read: 1 });
  });

  it("maxBacktrackDepth 0: no completed step is re-run, the stale input escalates (guard.max-backtrack-depth)", async () => {
    const w = world();
    const plan: PlanDraft = {
      steps: [
        w.read,
        step("wait", "slow", { dependsOn: ["read"] }),
        step("use", "use", { dependsOn: ["wait"], inputs: ["price"], freshFor: { price: 60_000 } }),
      ],
    };
    const h = (w.clock.h = harness(plan, w.tools, { policy: { maxBacktrackDepth: 0 } }));
    const out = await h.run();
    expect(out.decisions.map((d: Loose) => d.rule)).toEqual(["guard.max-backtrack-depth"]);
    expect(w.quote.calls).toHaveLength(1);
  });

  it("survives a SqliteSaver round trip: a new graph on the saved thread still finds the input stale after a retry", async () => {
    const w = world({ quoteEffects: true });
    const plan: PlanDraft = {
      steps: [
        w.read,
        step("wait", "slow", { dependsOn: ["read"] }),
        step("use", "use", { dependsOn: ["wait"], inputs: ["price"], freshFor: { price: 60_000 } }),
      ],
    };
    const saver = SqliteSaver.fromConnString(":memory:");
    const first = (w.clock.h = harness(plan, w.tools, { checkpointer: saver }));
    expect((await first.run()).status).toBe("awaiting_human");
    // Another process: a new graph on the same saver and thread, its clock where the first one stopped.
    const second = harness(plan, w.tools, { checkpointer: saver });
    second.clock.advance(90_000);
    const restored = await second.state();
    expect(restored.facts.price).toEqual({
      value: 100,
      label: "trusted",
      producedBy: "read",
      planVersion: 1,
      assumptions: [],
      derivedFrom: [],
      observedAt: at(0),
    });
    const out = await second.run(new Command({ resume: { action: "retry" } }));
    expect(out.status).toBe("awaiting_human");
    expect(out.decisions.map((d: Loose) => [d.rule, d.stepId])).toEqual([
      ["evidence.stale-escalate", "use"],
      ["human.retry", "use"],
      ["evidence.stale-escalate", "use"],
    ]);
    expect(w.quote.calls).toHaveLength(1);
    expect(w.use.calls).toEqual([]);
  });
});
