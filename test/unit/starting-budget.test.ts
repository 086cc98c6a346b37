/** A run's budget record before anything is spent is the policy's, decided in policy, not in the planner node. */
import { describe, expect, it } from "vitest";
import { resolvePolicy } from "../../src/policy/index.js";
import { startingBudget } from "../../src/policy/ladder/budget.js";

describe("startingBudget", () => {
  it("records the policy's limits, and its attempts per step only when they are not the library's 3", () => {
    expect(startingBudget(resolvePolicy({}))).toEqual({ spent: 0, replanSpent: 0 });
    expect(startingBudget(resolvePolicy({ defaultRetry: { maxAttempts: 3 } }))).toEqual({ spent: 0, replanSpent: 0 });
    const limited = resolvePolicy({ budget: { maxCost: 5, maxReplanCost: 2 }, defaultRetry: { maxAttempts: 5 } });
    expect(startingBudget(limited)).toEqual({ spent: 0, replanSpent: 0, maxCost: 5, maxReplanCost: 2, maxAttempts: 5 });
  });

  it("leaves out a limit the policy does not set, rather than storing it as undefined", () => {
    const budget = startingBudget(resolvePolicy({ budget: { maxReplanCost: 1 } }));
    expect(Object.keys(budget)).toEqual(["spent", "replanSpent", "maxReplanCost"]);
  });
});
