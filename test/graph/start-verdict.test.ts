/**
 * The graph asks the one start verdict (policy/attempt/may-start.ts `mayStart`) the createAgent middleware
 * asks: a step resting on an assumption found false is not started; it goes to its ladder instead.
 */
import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { AssumptionBrokenError, type PlanDraft } from "../../src/index.js";
import { harness, scriptedTool } from "../helpers/graph.js";

const plan: PlanDraft = {
  assumptions: [{ id: "in_stock", statement: "the item is in stock" }],
  steps: [
    { id: "check", goal: "Check stock", tool: "check", assumptions: ["in_stock"] },
    { id: "reserve", goal: "Reserve it", tool: "reserve", dependsOn: ["check"], assumptions: ["in_stock"] },
  ],
};

describe("the graph's start verdict", () => {
  it("does not start a step resting on an assumption found false: its ladder answers, then a person's retry runs it", async () => {
    const check = scriptedTool("check", [new AssumptionBrokenError("in_stock", "the shelf is empty"), { ok: true }]);
    const reserve = scriptedTool("reserve", [{ reserved: true }]);
    // No planner to replan with: the evidence escalates, and the assumption is false for the rest of the run.
    const h = harness(plan, [check, reserve]);
    const first = await h.run();
    expect(first.status).toBe("awaiting_human");
    expect(first.guards.falsified).toEqual(["in_stock"]);
    expect(first.decisions.map((d: { rule: string }) => d.rule)).toEqual(["replan.unavailable"]);

    // The person lets "check" run again (that outranks the assumption, for "check" only).
    const second = await h.run(new Command({ resume: { action: "retry" } }));
    expect(check.calls).toHaveLength(2);
    // "reserve" rests on the same false assumption: refused before its tool, sent to its ladder.
    expect(reserve.calls).toHaveLength(0);
    expect(second.status).toBe("awaiting_human");
    expect(second.steps.reserve).toMatchObject({
      status: "failed",
      attempts: 0,
      error: { name: "FalseAssumption", assumptionId: "in_stock" },
    });
    expect(second.decisions.slice(1).map((d: { rule: string; stepId?: string }) => [d.rule, d.stepId])).toEqual([
      ["human.retry", "check"],
      ["replan.unavailable", "reserve"],
    ]);
    expect(second.__interrupt__[0].value).toMatchObject({ kind: "escalation", stepId: "reserve" });

    // A person's retry of "reserve" is the other round that outranks the assumption: it runs, once.
    const third = await h.run(new Command({ resume: { action: "retry" } }));
    expect(reserve.calls).toHaveLength(1);
    expect(third.status).toBe("completed");
    expect(third.steps.reserve).toMatchObject({ status: "succeeded", attempts: 1 });
  });
});
