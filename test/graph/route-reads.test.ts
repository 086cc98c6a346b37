/**
 * Each conditional edge reads only the channels its route names (graph/routes.ts `reads`,
 * graph/langgraph-seam.ts `narrowRouteReads`): LangGraph's read behind a conditional edge copies
 * every channel the node wrote and applies its writes to the copy, so a route that reads three
 * channels no longer pays for the rest (docs/decisions/0059-short-path.md).
 */
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createPlanManager, staticPlanner } from "../../src/index.js";
import { CheckedChannel } from "../../src/runtime/checked-channel.js";
import {
  routeAfterClassifier,
  routeAfterExecutor,
  routeAfterExtender,
  routeAfterPlanner,
  routeAfterReplanner,
} from "../../src/graph/routes.js";
import { scriptedTool } from "../helpers/graph.js";
import { fakeClock } from "../helpers/clock.js";

const chain = (n: number) => ({
  steps: Array.from({ length: n }, (_, i) => ({
    id: `s${i}`,
    goal: `Step ${i}`,
    tool: "work",
    ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}),
  })),
});

function graph(n: number) {
  const work = scriptedTool("work", [() => ({ ok: true })]);
  return createPlanManager({ tools: [work], planner: staticPlanner({ plan: chain(n) }), clock: fakeClock() }).compile({
    checkpointer: new MemorySaver(),
  });
}

afterEach(() => vi.restoreAllMocks());

describe("a route reads only the channels it names", () => {
  it("the executor's writes to progress and guards are not copied for its route: five steps, no copy of either", async () => {
    const copied: string[] = [];
    const original = CheckedChannel.prototype.fromCheckpoint;
    vi.spyOn(CheckedChannel.prototype, "fromCheckpoint").mockImplementation(function (
      this: CheckedChannel<unknown>,
      checkpoint?: unknown,
    ) {
      copied.push(this.key);
      return original.call(this, checkpoint);
    });
    const updates: string[] = [];
    for await (const chunk of await graph(5).stream({ goal: "g" } as never, {
      configurable: { thread_id: "t" },
      streamMode: "updates",
    }))
      updates.push(...Object.keys(chunk as object));
    expect(updates).toEqual(["planner", "executor", "executor", "executor", "executor", "executor", "finalize"]);
    // Each channel is restored once when the run loads its thread; the planner's route reads status (which it
    // writes) and the finalize node has no route. Before, each executor visit copied both for its route.
    const count = (key: string) => copied.filter((k) => k === key).length;
    expect([count("progress"), count("guards"), count("status")]).toEqual([1, 1, 2]);
  });

  it("each route names the channels it reads", () => {
    const routes = [
      routeAfterPlanner,
      routeAfterExecutor,
      routeAfterExtender,
      routeAfterClassifier,
      routeAfterReplanner,
    ];
    expect(routes.map((r) => [r.name, [...r.reads]])).toEqual([
      ["routeAfterPlanner", ["status", "plan", "stop"]],
      ["routeAfterExecutor", ["stop", "deviation", "status", "compensations", "plan", "steps"]],
      ["routeAfterExtender", ["status"]],
      ["routeAfterClassifier", ["decisions", "status", "compensations"]],
      ["routeAfterReplanner", ["status"]],
    ]);
  });

  it("the executor's route sees the step records its node just wrote: the run ends after the last step", async () => {
    const result = (await graph(3).invoke({ goal: "g" } as never, { configurable: { thread_id: "t" } })) as {
      status: string;
      steps: Record<string, { status: string }>;
    };
    expect(result.status).toBe("completed");
    expect(Object.values(result.steps).map((s) => s.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
  });
});
