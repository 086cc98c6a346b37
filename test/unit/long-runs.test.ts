/**
 * Long runs (docs/decisions/0030-long-runs-per-step-cost.md): what keeps a step's work independent of
 * the steps already run, pinned by behaviour — the same answers as the whole-state computations.
 */
import { describe, expect, it } from "vitest";
import { Overwrite } from "@langchain/langgraph";
import { historyEntry, planAtVersion, stepsOfEveryVersion } from "../../src/plan/history.js";
import { factValues, mergeFactsInPlace, trustedValues } from "../../src/plan/facts.js";
import { overlay, overlayParts } from "../../src/plan/overlay.js";
import { firstUnfinished, mergeStepsInPlace, unfinishedSteps } from "../../src/plan/ready.js";
import type { Plan } from "../../src/plan/schema/plan.js";
import type { Fact, StepRun } from "../../src/plan/schema/run.js";
import type { Step } from "../../src/plan/schema/step.js";
import type { CheckedDeltaChannel } from "../../src/runtime/delta-channel.js";
import { PlanManagerState } from "../../src/runtime/state.js";

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

const run = (status: StepRun["status"], attempts = 1): StepRun => ({ status, attempts });
const fact = (value: unknown, label: Fact["label"] = "trusted"): Fact => ({
  value,
  label,
  producedBy: "s1",
  planVersion: 1,
  assumptions: [],
  derivedFrom: [],
});

describe("the step records channel merged in place", () => {
  const channel = () => PlanManagerState.spec.steps as unknown as CheckedDeltaChannel<Record<string, StepRun>>;

  it("changes its own value, and gives the same value when the same writes come twice", () => {
    const live = channel().mutatingTwin().fromCheckpoint(undefined);
    live.update([{ s1: run("succeeded") }]);
    const value = live.get();
    // The copy LangGraph restores for a conditional edge shares the value and is written first.
    const copy = live.fromCheckpoint(value);
    copy.update([{ s2: run("running") }]);
    live.update([{ s2: run("running") }]);
    expect(live.get()).toBe(value);
    expect(value).toEqual({ s1: run("succeeded"), s2: run("running") });
  });

  it("the channel a stream runs with never changes a value it handed out", () => {
    const live = channel().fromCheckpoint(undefined);
    live.update([{ s1: run("succeeded") }]);
    const handedOut = live.get();
    live.update([{ s2: run("running") }]);
    expect(handedOut).toEqual({ s1: run("succeeded") });
    expect(live.get()).toEqual({ s1: run("succeeded"), s2: run("running") });
    expect(channel().mutatingTwin().mutatingTwin()).not.toBe(channel());
  });

  it("copies the object an Overwrite hands it before writing into it", () => {
    const live = channel().mutatingTwin().fromCheckpoint(undefined);
    const written = { s1: run("succeeded") };
    live.update([new Overwrite(written) as never]);
    live.update([{ s2: run("running") }]);
    expect(written).toEqual({ s1: run("succeeded") });
    expect(live.get()).toEqual({ s1: run("succeeded"), s2: run("running") });
  });

  it("rejects a bad write before changing anything", () => {
    const live = channel().mutatingTwin().fromCheckpoint(undefined);
    live.update([{ s1: run("succeeded") }]);
    const before = live.get();
    expect(() => live.update([{ s2: { status: "nope", attempts: 1 } } as never])).toThrow(
      /state update rejected: steps\.s2\.status/,
    );
    expect(before).toEqual({ s1: run("succeeded") });
  });
});

describe("trusted values of a facts object", () => {
  it("are computed once per object and kept right by the in-place merge, relabelling included", () => {
    const facts: Record<string, Fact> = { a: fact(1), b: fact("x", "suspect") };
    const trusted = trustedValues(facts);
    expect(trusted).toEqual({ a: 1 });
    expect(trustedValues(facts)).toBe(trusted);
    mergeFactsInPlace(facts, [{ c: fact(3) }, undefined, { a: fact(1, "invalidated"), b: fact("x") }]);
    expect(trustedValues(facts)).toBe(trusted);
    expect(trusted).toEqual({ b: "x", c: 3 });
    expect(trusted).toEqual(factValues(facts));
  });
});

describe("overlay", () => {
  it("reads the base with the changes on top, writes only the changes, and enumerates both", () => {
    const base = { a: 1, b: 2 };
    const changes: Record<string, number> = {};
    const view = overlay(base, changes);
    view.b = 20;
    view.c = 30;
    expect([view.a, view.b, view.c, view.d]).toEqual([1, 20, 30, undefined]);
    expect([Object.hasOwn(view, "a"), Object.hasOwn(view, "c"), Object.hasOwn(view, "d"), "b" in view]).toEqual([
      true,
      true,
      false,
      true,
    ]);
    expect(base).toEqual({ a: 1, b: 2 });
    expect(changes).toEqual({ b: 20, c: 30 });
    expect({ ...view }).toEqual({ a: 1, b: 20, c: 30 });
    expect(Object.keys(view)).toEqual(["a", "b", "c"]);
    expect(overlayParts(view)).toEqual({ base, changes });
    expect(overlayParts(base)).toBeUndefined();
  });
});

describe("firstUnfinished", () => {
  const plan: Plan = { version: 1, steps: ["a", "b", "c", "d"].map((id) => step(id)), assumptions: [] };

  it("is the first step not finished, and moves back when an in-place merge reopens an earlier step", () => {
    const steps: Record<string, StepRun> = {};
    expect(firstUnfinished(plan, steps)).toBe(0);
    mergeStepsInPlace(steps, [{ a: run("succeeded"), b: { status: "skipped", attempts: 0, skipReason: "when" } }]);
    expect(firstUnfinished(plan, steps)).toBe(2);
    mergeStepsInPlace(steps, [{ c: run("succeeded") }, { d: run("running") }]);
    expect(firstUnfinished(plan, steps)).toBe(3);
    // A backtrack makes "a" pending again.
    mergeStepsInPlace(steps, [{ a: run("pending") }]);
    expect(firstUnfinished(plan, steps)).toBe(0);
    mergeStepsInPlace(steps, [{ a: run("succeeded"), d: run("succeeded") }]);
    expect(firstUnfinished(plan, steps)).toBe(4);
    expect(unfinishedSteps(plan, steps)).toEqual([]);
  });

  it("on a visit's view, starts from its base and counts the visit's own changes", () => {
    const base: Record<string, StepRun> = { a: run("succeeded"), b: run("succeeded") };
    expect(firstUnfinished(plan, base)).toBe(2);
    const view = overlay(base, {});
    view.c = run("succeeded");
    expect(firstUnfinished(plan, view)).toBe(3);
    view.a = run("failed", 2);
    expect(firstUnfinished(plan, view)).toBe(0);
    expect(unfinishedSteps(plan, view).map((s) => s.id)).toEqual(["a", "b", "c", "d"].slice(0));
    expect(firstUnfinished(plan, base)).toBe(2);
  });
});

describe("a plan write", () => {
  const channel = () => PlanManagerState.spec.plan as unknown as CheckedDeltaChannel<Plan | undefined>;

  it("that keeps the current steps checks the rest, and names a bad one where the caller wrote it", () => {
    const live = channel().fromCheckpoint(undefined);
    const v1: Plan = { version: 1, steps: [step("a"), step("b")], assumptions: [] };
    live.update([v1]);
    const bad = { ...step("c"), tool: 42 } as unknown as Step;
    expect(() => live.update([{ version: 2, steps: [...v1.steps, bad], assumptions: [] }])).toThrow(
      /state update rejected: plan\.steps\.2\.tool/,
    );
    expect(live.get()).toBe(v1);
    live.update([{ version: 2, steps: [...v1.steps, step("c")], assumptions: [] }]);
    expect(live.get()!.steps.map((s) => s.id)).toEqual(["a", "b", "c"]);
  });
});
