/**
 * A run started with a plan draft in its input (`invoke({ goal, draft })`, `plan_create`'s `plan`)
 * runs that draft instead of asking the planner, validated like a planner's draft; a malformed
 * draft is refused before anything is written.
 */
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { createPlanManager, isPlanManagerError, type Planner } from "../../src/index.js";
import { scriptedTool } from "../helpers/graph.js";

function graphWith(saver = new MemorySaver()) {
  const asked: string[] = [];
  const planner: Planner = {
    plan: async (request) => {
      asked.push(request.goal);
      return { steps: [{ id: "own", goal: "the planner's step", tool: "lookup" }] };
    },
  };
  const lookup = scriptedTool("lookup", [{ found: 1 }]);
  const graph = createPlanManager({ tools: [lookup], planner }).compile({ checkpointer: saver });
  return { graph, asked, lookup, saver };
}

describe("a draft given in the input", () => {
  it("runs instead of the planner's, and the planner is not asked", async () => {
    const { graph, asked, lookup } = graphWith();
    const draft = {
      steps: [{ id: "given", goal: "the caller's step", tool: "lookup", args: { q: "x" }, produces: ["found"] }],
    };
    const out = await graph.invoke({ goal: "find it", draft }, { configurable: { thread_id: "t1" } });
    expect(out.status).toBe("completed");
    expect(out.plan!.steps.map((s) => s.id)).toEqual(["given"]);
    expect(asked).toEqual([]);
    expect(lookup.calls).toEqual([{ q: "x" }]);
  });

  it("a draft naming a tool the graph lacks fails the run as invalid_plan, with no tool called", async () => {
    const { graph, lookup } = graphWith();
    const draft = { steps: [{ id: "given", goal: "g", tool: "nope" }] };
    const out = await graph.invoke({ goal: "find it", draft }, { configurable: { thread_id: "t2" } });
    expect(out.status).toBe("failed");
    expect(out.outcome?.failureReason).toBe("invalid_plan");
    expect(lookup.calls).toEqual([]);
  });

  it("a malformed draft is invalid_input naming the field, and nothing is written", async () => {
    const { graph, saver } = graphWith();
    const huge = { steps: [{ id: "a", goal: "g", tool: "lookup", args: { blob: "x".repeat(70_000) } }] };
    const bigint = { steps: [{ id: "a", goal: "g", tool: "lookup", args: { n: 1n } }] };
    for (const draft of [
      { steps: [] },
      { steps: [{ id: "__proto__", goal: "g", tool: "lookup" }] },
      "steps",
      42,
      huge,
      bigint,
    ]) {
      const error = await graph
        .invoke({ goal: "g", draft } as never, { configurable: { thread_id: "t3" } })
        .catch((e: unknown) => e);
      expect(isPlanManagerError(error) && error.code).toBe("invalid_input");
      expect(isPlanManagerError(error) && error.path?.startsWith("draft")).toBe(true);
    }
    expect(await saver.getTuple({ configurable: { thread_id: "t3" } })).toBeUndefined();
  });
});
