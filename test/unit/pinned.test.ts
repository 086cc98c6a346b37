import { describe, expect, it } from "vitest";
import { pin } from "../../src/plan/pinned.js";
import { mergeStepsInPlace } from "../../src/plan/ready.js";
import { mergeFactsInPlace, trustedValues } from "../../src/plan/facts.js";
import { mergeInPlace } from "../../src/runtime/delta-channel.js";
import type { Fact, StepRun } from "../../src/plan/schema/run.js";

const run = (status: StepRun["status"], attempts = 1): StepRun => ({ status, attempts });
const fact = (value: unknown, label: Fact["label"] = "trusted"): Fact =>
  ({ value, label, source: { kind: "input" } }) as unknown as Fact;

describe("pin: a record as it stands, while in-place merges go on", () => {
  it("keeps the step records it was taken on; a new key stays out; release shows the merged record", () => {
    const steps: Record<string, StepRun> = { a: run("succeeded"), b: run("running") };
    const held = pin(steps);
    mergeStepsInPlace(steps, [{ b: run("failed", 2), c: run("pending", 0) }]);
    expect(steps.b).toEqual(run("failed", 2));
    expect(held.view.b).toEqual(run("running"));
    expect(held.view.c).toBeUndefined();
    expect("c" in held.view).toBe(false);
    expect({ ...held.view }).toEqual({ a: run("succeeded"), b: run("running") });
    held.release();
    expect({ ...held.view }).toEqual({ a: run("succeeded"), b: run("failed", 2), c: run("pending", 0) });
  });

  it("a trusted value made suspect (deleted from the trusted values) still reads in the pinned view", () => {
    const facts: Record<string, Fact> = { rate: fact(2), city: fact("Oslo") };
    const trusted = trustedValues(facts);
    const held = pin(trusted);
    mergeFactsInPlace(facts, [{ rate: fact(3, "suspect"), city: fact("Bergen") }]);
    expect(trusted).toEqual({ city: "Bergen" });
    expect({ ...held.view }).toEqual({ rate: 2, city: "Oslo" });
    expect(Object.keys(held.view).sort()).toEqual(["city", "rate"]);
  });

  it("two pins taken at different times each keep their own moment; released, they read the record as it is", () => {
    const record: Record<string, number> = { x: 1 };
    const first = pin(record);
    mergeInPlace(record, [{ x: 2 }]);
    const second = pin(record);
    mergeInPlace(record, [{ x: 3, y: 1 }]);
    expect([first.view.x, second.view.x, record.x]).toEqual([1, 2, 3]);
    expect([Object.keys(first.view), Object.keys(second.view)]).toEqual([["x"], ["x"]]);
    first.release();
    second.release();
    mergeInPlace(record, [{ x: 4 }]);
    expect([first.view.x, second.view.x]).toEqual([4, 4]);
  });

  it("refuses writes through the view", () => {
    const held = pin<number>({ x: 1 });
    expect(Reflect.set(held.view, "x", 2)).toBe(false);
    expect(Reflect.deleteProperty(held.view, "x")).toBe(false);
    expect(held.view.x).toBe(1);
  });
});
