/**
 * Names and numbers that come from the caller or a model are keys and prices, never a way to break
 * a thread: a tool named like an Object.prototype member is refused when the manager is built,
 * a model reporting such a name has no price, prices and the clock are checked.
 */
import { describe, expect, it } from "vitest";
import { createPlanManager, isPlanManagerError, llmClassifier, llmPlanner } from "../../src/index.js";
import { lowerLimit, mayStart, raiseLimit, readinessOf } from "../../src/policy/attempt/may-start.js";
import { ScriptedChatModel } from "../helpers/fake-model.js";
import { harness, scriptedTool } from "../helpers/graph.js";
import { llmAnswer, llmStep } from "../helpers/llm-answers.js";

const planner = { plan: async () => ({ steps: [{ id: "a", goal: "A", tool: "work" }] }) };

function refusal(build: () => unknown): [string, string | undefined, string] | undefined {
  try {
    build();
  } catch (error) {
    if (isPlanManagerError(error)) return [error.code, error.path, error.message];
    throw error;
  }
  return undefined;
}

describe("hostile names and numbers", () => {
  it.each(["toString", "constructor", "hasOwnProperty", "__proto__", "valueOf"])(
    "refuses a tool named %s when the manager is built",
    (name) => {
      const tools = [scriptedTool("work", [{}]), scriptedTool(name, [{}])];
      expect(refusal(() => createPlanManager({ tools, planner }))).toEqual([
        "invalid_options",
        "tools[1].name",
        `tools[1]: the tool name "${name}" is reserved (it names a member of Object.prototype); rename the tool`,
      ]);
    },
  );

  it("keeps per-tool limits to the tool's own entry, whatever the tool is called", () => {
    const plan = { version: 1, steps: [{ id: "a", goal: "A", tool: "toString" }], assumptions: [] };
    const dispatch = { running: [], maxConcurrency: 4, toolLimits: {} };
    expect(mayStart(plan.steps[0]!, { ...readinessOf(plan, {}, {}, []), dispatch }, "toString")).toEqual({ ok: true });
    expect(lowerLimit({}, "constructor", 4, 4)).toEqual({
      limits: { constructor: 2 },
      change: { tool: "constructor", from: 4, to: 2, why: "rate limited with 4 calls running" },
    });
    expect(raiseLimit({}, "hasOwnProperty", 4)).toEqual({ limits: {} });
  });

  it("prices a model that reports the name constructor at 0, and the run completes", async () => {
    const answer = llmAnswer([llmStep("a", { tool: "work" })]);
    const model = new ScriptedChatModel([answer], { model: "constructor" });
    const prices = { "gpt-x": { input: 2, output: 8 } };
    const out = await harness(llmPlanner({ model, prices }), [scriptedTool("work", [{ ok: true }])]).run();
    expect(out.status).toBe("completed");
    expect(out.usage.map((u: { model: string; cost: number }) => [u.model, u.cost])).toEqual([["constructor", 0]]);
    expect(out.budget.spent).toBe(0);
  });

  it.each([
    [{ m: { input: -1, output: 2 } }, "prices.m.input"],
    [{ m: { input: 1, output: Number.NaN } }, "prices.m.output"],
    [{ m: { input: Number.POSITIVE_INFINITY, output: 1 } }, "prices.m.input"],
    [{ m: { input: "2", output: 1 } }, "prices.m.input"],
    [{ m: null }, "prices.m"],
    ["cheap", "prices"],
  ])("refuses prices %j where they enter (%s)", (prices, path) => {
    const model = new ScriptedChatModel([]);
    const tools = [scriptedTool("work", [{}])];
    for (const build of [
      () => createPlanManager({ tools, planner, prices: prices as never }),
      () => llmPlanner({ model, prices: prices as never }),
      () => llmClassifier({ model, prices: prices as never }),
    ]) {
      const refused = refusal(build);
      expect(refused?.slice(0, 2)).toEqual(["invalid_options", path]);
    }
  });

  it("refuses a clock whose now() is not epoch milliseconds, at construction and when it changes later", async () => {
    const tools = [scriptedTool("work", [{}])];
    expect(refusal(() => createPlanManager({ tools, planner, clock: { now: () => "2026-01-01" as never } }))).toEqual([
      "invalid_options",
      "clock.now",
      'clock.now must return epoch milliseconds as a finite number; it returned "2026-01-01"',
    ]);
    expect(refusal(() => createPlanManager({ tools, planner, clock: { now: 5 as never } }))?.slice(0, 2)).toEqual([
      "invalid_options",
      "clock.now",
    ]);
    let reads = 0;
    const now = () => (++reads > 1 ? Number.NaN : 0);
    const graph = createPlanManager({ tools, planner, clock: { now } }).compile();
    let thrown: unknown;
    try {
      await graph.invoke({ goal: "g" }, { configurable: { thread_id: "t" } });
    } catch (error) {
      thrown = error;
    }
    expect(isPlanManagerError(thrown) && [thrown.code, thrown.path, thrown.message]).toEqual([
      "invalid_options",
      "clock.now",
      "clock.now must return epoch milliseconds as a finite number; it returned NaN",
    ]);
  });
});
