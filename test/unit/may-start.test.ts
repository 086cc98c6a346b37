import { describe, expect, it } from "vitest";
import { readinessOf, readyToStart, type Readiness } from "../../src/policy/attempt/may-start.js";
import type { Plan } from "../../src/plan/schema/plan.js";
import type { StepRun } from "../../src/plan/schema/run.js";
import type { Step } from "../../src/plan/schema/step.js";

const step = (id: string, extra: Partial<Step> = {}): Step => ({ id, goal: id, tool: "t", ...extra }) as Step;
const a = step("a");
const b = step("b", { dependsOn: ["a"] });
const c = step("c", { assumptions: ["A1"] });
const plan: Plan = { version: 1, steps: [a, b, c], assumptions: [] } as Plan;
const failed: StepRun = { status: "failed", attempts: 2, error: { name: "Error", message: "boom" } };

function standing(steps: Record<string, StepRun>, falsified: string[] = []): Readiness {
  return readinessOf(plan, steps, {}, falsified);
}

describe("readyToStart: the readiness clause of the one start verdict", () => {
  const rows: { name: string; step: Step; r: Readiness; rule?: string; reason?: string }[] = [
    { name: "a ready step starts", step: a, r: standing({}) },
    {
      name: "a dependency not done: start.not-ready, naming what it waits for",
      step: b,
      r: standing({}),
      rule: "start.not-ready",
      reason: 'step "b" is not ready: it waits for a',
    },
    { name: "its dependency done, it starts", step: b, r: standing({ a: { status: "succeeded", attempts: 1 } }) },
    {
      name: "a failed step: start.failed, with its error",
      step: a,
      r: standing({ a: failed }),
      rule: "start.failed",
      reason: 'step "a" failed (boom): revise the plan with write_plan',
    },
    {
      name: "resting on a false assumption: start.false-assumption, even when ready",
      step: c,
      r: standing({}, ["A1"]),
      rule: "start.false-assumption",
      reason: 'step "c" rests on assumption "A1", which is false: revise the plan with write_plan',
    },
    {
      name: "a person allowed it another round: the false assumption does not hold it back",
      step: c,
      r: standing({ c: { status: "pending", attempts: 1, retryBase: 1 } }, ["A1"]),
    },
  ];
  it.each(rows)("$name", (row) => {
    const expected = row.rule ? { ok: false, rule: row.rule, reason: row.reason } : { ok: true };
    expect(readyToStart(row.step, row.r)).toEqual(expected);
  });

  it("the ready set is selectReady's: only steps whose dependencies are done", () => {
    expect([...standing({}).ready]).toEqual(["a", "c"]);
    expect([...standing({ a: { status: "succeeded", attempts: 1 } }).ready]).toEqual(["b", "c"]);
  });
});
