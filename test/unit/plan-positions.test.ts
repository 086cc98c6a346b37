/**
 * Step positions of appended plans (plan/ready.ts): a route's read of an extension and the channel's
 * own apply the same write to the same plan, so the second takes the index the first grew; a plan
 * that appended other steps does not.
 */
import { describe, expect, it } from "vitest";
import { notePlanAppend, stepPosition } from "../../src/plan/ready.js";
import type { Plan } from "../../src/plan/schema/plan.js";
import type { Step } from "../../src/plan/schema/step.js";

const step = (id: string): Step => ({ id, goal: id, tool: "t" }) as Step;
const appended = (from: Plan, steps: Step[]): Plan => {
  const plan = { ...from, steps: [...from.steps, ...steps] };
  notePlanAppend(from, plan);
  return plan;
};

describe("positions of appended plans", () => {
  it("the same append twice, then another append, and a fork with other steps", () => {
    const [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map(step) as [Step, Step, Step, Step, Step];
    const first: Plan = { version: 1, steps: [a, b], assumptions: [] };
    expect(stepPosition(first, "b")).toBe(1);
    const read = appended(first, [c]);
    expect(stepPosition(read, "c")).toBe(2);
    const live = appended(first, [c]);
    expect([stepPosition(live, "a"), stepPosition(live, "c")]).toEqual([0, 2]);
    const fork = appended(first, [d]);
    expect([stepPosition(fork, "d"), stepPosition(fork, "c")]).toEqual([2, undefined]);
    const next = appended(live, [e]);
    expect([stepPosition(next, "c"), stepPosition(next, "e"), stepPosition(next, "d")]).toEqual([2, 3, undefined]);
    expect([stepPosition(live, "e"), stepPosition(first, "c")]).toEqual([undefined, undefined]);
  });
});
