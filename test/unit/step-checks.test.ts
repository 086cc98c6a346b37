import { describe, expect, it } from "vitest";
import type { Fact, StepRun } from "../../src/plan/schema/run.js";
import type { Step } from "../../src/plan/schema/step.js";
import {
  checkBudget,
  checkCommittedEffect,
  checkInputs,
  checkPreconditions,
  judgeOutput,
} from "../../src/policy/attempt/checks.js";

const fact = (value: unknown, label: Fact["label"] = "trusted"): Fact => ({
  value,
  label,
  producedBy: "x",
  planVersion: 1,
  assumptions: [],
  derivedFrom: [],
});
const step: Step = {
  id: "s",
  goal: "g",
  tool: "t",
  inputs: ["a", "b"],
  produces: ["out"],
  successSignal: "output.out > 0",
  cost: 0.3,
};

describe("step checks (pure)", () => {
  it("names untrusted and missing inputs", () => {
    const facts = { a: fact(1, "suspect") };
    expect(checkInputs(step, facts, {})).toEqual({
      deviation: {
        kind: "precondition",
        message: "input facts not trusted: a (suspect), b (missing)",
        missing: ["a", "b"],
      },
      error: { name: "PreconditionFailed", message: "inputs not trusted: a (suspect), b (missing)" },
    });
    expect(checkInputs(step, { a: fact(1), b: fact(2) }, { a: 1, b: 2 })).toBeUndefined();
  });

  it("reports the first false precondition with the facts it read", () => {
    const s: Step = { ...step, preconditions: ["facts.a > 0", "facts.b > facts.a"] };
    expect(checkPreconditions(s, { a: 2, b: 1 })).toEqual({
      deviation: {
        kind: "precondition",
        message: 'precondition "facts.b > facts.a" is false',
        expression: "facts.b > facts.a",
        facts: ["b", "a"],
      },
      error: { name: "PreconditionFailed", message: 'precondition "facts.b > facts.a" is false' },
    });
    expect(checkPreconditions(s, { a: 1, b: 2 })).toBeUndefined();
  });

  it("refuses a step whose cost would exceed budget.maxCost", () => {
    expect(checkBudget(step, 0.8, 1)?.error).toEqual({
      name: "BudgetExhausted",
      message: 'step "s" costs 0.3; 0.8 of 1 is spent, so it would exceed budget.maxCost',
    });
    expect(checkBudget(step, 0.7, 1)).toBeUndefined();
    expect(checkBudget(step, 99, undefined)).toBeUndefined();
  });

  it("stops a changed operation on a step that committed one, unless a person approved that key", () => {
    const committed = [{ stepId: "s", idempotencyKey: "t:old", at: "x", output: { out: 1 } }];
    const changed = { key: "t:new", legacy: "t:s:new" };
    const check = (key: typeof changed | undefined, run?: StepRun) =>
      checkCommittedEffect(step, key, run, committed, {}, "t {}");
    expect(check(changed)).toMatchObject({
      deviation: { kind: "side_effect_changed", committedKey: "t:old", proposedKey: "t:new" },
    });
    expect(check(changed, { status: "pending", attempts: 1, approval: { key: "t:new" } })).toBeUndefined();
    expect(check(undefined)).toBeUndefined();
  });

  it("reuses the output of the same operation committed under any step id, or under the key 0.x gave it", () => {
    const record = { stepId: "other", idempotencyKey: "t:same", at: "x", output: { out: 1 } };
    const same = { key: "t:same", legacy: "t:s:same" };
    expect(checkCommittedEffect(step, same, undefined, [record], {}, "t {}")).toEqual({
      reuse: record,
      output: { out: 1 },
    });
    // A record from before outputs were kept: its step's output, while that step has committed nothing since.
    const old = { stepId: "s", idempotencyKey: "t:s:same", at: "x" };
    const steps: Record<string, StepRun> = { s: { status: "succeeded", attempts: 1, output: { out: 2 } } };
    expect(checkCommittedEffect(step, same, undefined, [old], steps, "t {}")).toEqual({
      reuse: old,
      output: { out: 2 },
    });
    const later = { stepId: "s", idempotencyKey: "t:other", at: "y" };
    expect(checkCommittedEffect(step, same, undefined, [old, later], steps, "t {}")).toBeUndefined();
  });

  it("judges an output: storable, signal met, produced fields present", () => {
    expect(judgeOutput(step, { out: 3 }, {})).toEqual({ ok: true, values: { out: 3 }, output: { out: 3 } });
    expect(judgeOutput(step, { out: 0 }, {})).toEqual({
      ok: false,
      output: { out: 0 },
      deviation: {
        kind: "signal_unmet",
        message: 's: success signal "output.out > 0" is false for output {"out":0}',
        expression: "output.out > 0",
      },
      error: { name: "SuccessSignalUnmet", message: 'success signal "output.out > 0" is false for output {"out":0}' },
    });
    expect(judgeOutput({ ...step, successSignal: undefined }, { other: 1 }, {})).toMatchObject({
      ok: false,
      deviation: { kind: "signal_unmet", message: 's: output {"other":1} lacks produced field out' },
    });
    const at = new Date("2026-03-01T10:00:00Z");
    expect(judgeOutput(step, { out: 1, at }, {})).toEqual({
      ok: true,
      values: { out: 1 },
      output: { out: 1, at: "2026-03-01T10:00:00.000Z" },
    });
    expect(judgeOutput(step, { out: new Map() }, {})).toEqual({
      ok: false,
      deviation: {
        kind: "output_rejected",
        message:
          "s: output.out is a Map; tools must return JSON values (plain objects, arrays, strings, numbers, booleans, null)",
      },
      error: {
        name: "OutputRejected",
        message:
          "output.out is a Map; tools must return JSON values (plain objects, arrays, strings, numbers, booleans, null)",
      },
    });
    const deep = JSON.parse("[".repeat(40) + "]".repeat(40));
    expect(judgeOutput(step, deep, {})).toEqual({
      ok: false,
      deviation: { kind: "output_rejected", message: "s: output is nested deeper than 32 levels" },
      error: { name: "OutputRejected", message: "output is nested deeper than 32 levels" },
    });
  });
});
