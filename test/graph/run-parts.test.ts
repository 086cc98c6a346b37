/**
 * What a run hands its nodes goes under one configurable key (runtime/run-parts.ts): LangGraph and
 * LangChain copy a run's configurable at every runnable call.
 */
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createPlanManager, staticPlanner } from "../../src/index.js";

describe("the run's parts in a tool's config", () => {
  it("one key of this package beside the step's own fields, holding the dispatcher, held events, journal and hold", async () => {
    let seen: Record<string, unknown> = {};
    const look = tool(
      async (_args, config: { configurable?: Record<string, unknown> }) => {
        seen = config.configurable ?? {};
        return { ok: true };
      },
      { name: "look", description: "looks", schema: z.object({}).passthrough() },
    );
    const planner = staticPlanner({ plan: { steps: [{ id: "a", goal: "A", tool: "look" }] } });
    const graph = createPlanManager({ tools: [look], planner }).compile({ checkpointer: new MemorySaver() });
    const result = (await graph.invoke({ goal: "g" } as never, { configurable: { thread_id: "t" } })) as {
      status: string;
    };
    expect(result.status).toBe("completed");
    const ours = Object.keys(seen).filter((k) => k.startsWith("__langgraph_replan"));
    expect(ours).toEqual(["__langgraph_replan"]);
    expect(Object.keys(seen.__langgraph_replan as object).sort()).toEqual(["dispatch", "held", "journal", "threadRun"]);
    expect([seen.stepId, seen.attempt, seen.planVersion, seen.thread_id]).toEqual(["a", 1, 1, "t"]);
  });
});
