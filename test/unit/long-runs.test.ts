/**
 * Long runs (docs/decisions/0026-scale-per-step-cost.md): what keeps a step's work independent of
 * the steps already run, pinned by behaviour — the same answers as the whole-state computations.
 */
import { describe, expect, it } from "vitest";
import { historyEntry, planAtVersion, stepsOfEveryVersion } from "../../src/plan/history.js";
import type { Plan, Step } from "../../src/plan/schema.js";

const step = (id: string, tool = "work", args: Record<string, unknown> = {}): Step => ({ id, goal: id, tool, args });

describe("stepsOfEveryVersion", () => {
  it("holds every definition any version had, as the versions rebuilt one by one do", () => {
    const v1: Plan = { version: 1, steps: [step("a"), step("b", "pay", { to: "x" })], assumptions: [] };
    // v2 changes b's arguments and adds c; v3 removes c, keeps a and b as they were in v2.
    const v2: Plan = { version: 2, steps: [v1.steps[0]!, step("b", "pay", { to: "y" }), step("c")], assumptions: [] };
    const v3: Plan = { version: 3, steps: [v2.steps[0]!, v2.steps[1]!, step("d", "mail")], assumptions: [] };
    const state = { plan: v3, planHistory: [historyEntry(v1, v2), historyEntry(v2, v3)] };
    const rebuilt = [1, 2, 3].flatMap((v) => planAtVersion(state, v)!.steps);
    const key = (s: Step) => JSON.stringify(s);
    expect(new Set(stepsOfEveryVersion(state).map(key))).toEqual(new Set(rebuilt.map(key)));
    expect(stepsOfEveryVersion(state).map((s) => `${s.id}:${JSON.stringify(s.args)}`)).toEqual([
      "a:{}",
      'b:{"to":"y"}',
      "d:{}",
      'b:{"to":"x"}',
      "c:{}",
    ]);
    expect(stepsOfEveryVersion({ planHistory: [] })).toEqual([]);
  });

  it("an extension that hands earlier steps back as the same objects replaces none of them", () => {
    const v1: Plan = { version: 1, steps: [step("a"), step("b")], assumptions: [] };
    const v2: Plan = { version: 2, steps: [...v1.steps, step("c")], assumptions: [] };
    expect(historyEntry(v1, v2).replaced).toEqual([]);
    // Equal but distinct objects are compared by content, as before.
    const v2b: Plan = { version: 2, steps: [step("a"), step("b", "other")], assumptions: [] };
    expect(historyEntry(v1, v2b).replaced.map((s) => s.id)).toEqual(["b"]);
  });
});
