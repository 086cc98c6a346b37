import { describe, expect, it } from "vitest";
import { staticPlanner, type PlanDraft, type ReplanRequest } from "../../src/index.js";
import { brief, harness, httpError, scriptedTool } from "../helpers/graph.js";

/** a (cost 3) → b (cost 3): 6 in all, against budget.maxCost 5. */
const dear: PlanDraft = {
  steps: [
    { id: "a", goal: "get x", tool: "a", produces: ["x"], cost: 3 },
    { id: "b", goal: "use x", tool: "b", dependsOn: ["a"], inputs: ["x"], produces: ["y"], cost: 3 },
  ],
};

const cheaper: PlanDraft = {
  steps: [
    { id: "a2", goal: "get x cheaply", tool: "cheap", produces: ["x"], cost: 1 },
    { id: "b", goal: "use x", tool: "b", dependsOn: ["a2"], inputs: ["x"], produces: ["y"], cost: 3 },
  ],
};

function tools() {
  return [scriptedTool("a", [{ x: 1 }]), scriptedTool("b", [{ y: 2 }]), scriptedTool("cheap", [{ x: 1 }])];
}

describe("plan-level budget", () => {
  it("asks for a cheaper route before any step of a plan that cannot fit starts", async () => {
    const [a, b, cheap] = tools();
    const requests: ReplanRequest[] = [];
    const planner = staticPlanner({ plan: dear, replan: (r) => (requests.push(r), cheaper) });
    const out = await harness(planner, [a!, b!, cheap!], { policy: { budget: { maxCost: 5 } } }).run();
    expect(a!.calls).toEqual([]);
    expect(brief(out.decisions)).toEqual(["-: budget_exhausted → replan_global [budget.replan-cheaper]"]);
    expect(out.decisions[0].reason).toBe(
      "plan version 1 costs 6 for the steps not yet done (a 3, b 3); 0 of 5 is spent, so it would exceed " +
        "budget.maxCost; asking the planner for a cheaper route",
    );
    expect(requests[0]!.scope).toBe("global");
    expect(requests[0]!.budget).toEqual({ remaining: 5 });
    expect(out.status).toBe("completed");
    expect(out.budget.spent).toBe(4);
  });

  it("escalates before any step starts when the planner cannot replan", async () => {
    const [a, b] = tools();
    const out = await harness(dear, [a!, b!], { policy: { budget: { maxCost: 5 } } }).run();
    expect(a!.calls).toEqual([]);
    expect(out.status).toBe("awaiting_human");
    expect(brief(out.decisions)).toEqual(["-: budget_exhausted → escalate [replan.unavailable]"]);
  });

  it("holds a replan's version against what is left: the steps already done are not counted again", async () => {
    const [a, b, cheap] = tools();
    const plan: PlanDraft = {
      steps: [
        { id: "a", goal: "get x", tool: "a", produces: ["x"], cost: 2 },
        { id: "b", goal: "use x", tool: "b", dependsOn: ["a"], inputs: ["x"], produces: ["y"], cost: 3 },
      ],
    };
    const out = await harness(plan, [a!, b!, cheap!], { policy: { budget: { maxCost: 5 } } }).run();
    expect(out.status).toBe("completed");
    expect(out.budget.spent).toBe(5);
    expect(out.decisions).toEqual([]);
  });

  it("charges a fallback attempt its own cost instead of the step's", async () => {
    const primary = scriptedTool("a", [httpError(404)]);
    const alt = scriptedTool("alt", [{ x: 1 }]);
    const plan: PlanDraft = {
      steps: [{ id: "a", goal: "get x", tool: "a", produces: ["x"], cost: 1, fallback: { tool: "alt", cost: 4 } }],
    };
    const out = await harness(plan, [primary, alt]).run();
    expect(out.status).toBe("completed");
    expect(alt.calls).toHaveLength(1);
    expect(out.budget.spent).toBe(5);
    expect(out.steps.a.cost).toBe(5);
  });
});
