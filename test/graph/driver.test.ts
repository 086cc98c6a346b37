/**
 * One job's turn in a worker, without PostgreSQL: a job that got no slot goes back unchanged and
 * runs nothing; with a slot the run's own output is the report, and the slot is given back.
 */
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { createPlanManager, staticPlanner } from "../../src/index.js";
import { driveThread, type DrivableGraph } from "../../src/worker/driver.js";
import type { ThreadControl } from "../../src/worker/stop-watch.js";
import { scriptedTool } from "../helpers/graph.js";

const plan = { steps: [{ id: "a", goal: "first", tool: "echo", args: {}, produces: ["v"] }] };

describe("a worker's turn on a thread", () => {
  it("no slot: the same job is queued again and nothing runs; a slot: the run reports and frees it", async () => {
    const echo = scriptedTool("echo", [{ v: 1 }]);
    const graph = createPlanManager({ tools: [echo], planner: staticPlanner({ plan }) }).compile({
      checkpointer: new MemorySaver(),
    }) as unknown as DrivableGraph;
    const control: ThreadControl = {
      stop: undefined,
      wanted: () => undefined,
      pause: () => undefined,
      refresh: async () => undefined,
      release: () => undefined,
    };
    const sent: string[] = [];
    const turn = (slot: (() => void) | undefined) => ({
      slot: async () => slot,
      until: Date.now() + 60_000,
      continueLater: async () => void sent.push("continue"),
      requeue: async () => void sent.push("requeue"),
    });
    const job = { kind: "run" as const, threadId: "d1", input: { goal: "one step" } };
    const stops = { clearStopRequest: async () => undefined };

    expect(await driveThread(graph, job, control, stops, turn(undefined))).toEqual({ continued: true });
    expect(sent).toEqual(["requeue"]);
    expect(echo.calls).toEqual([]);
    expect((await graph.getState({ configurable: { thread_id: "d1" } })).values).toEqual({});

    const report = await driveThread(
      graph,
      job,
      control,
      stops,
      turn(() => void sent.push("slot freed")),
    );
    expect(report && "status" in report && [report.threadId, report.status, report.parked]).toEqual([
      "d1",
      "completed",
      false,
    ]);
    expect(sent).toEqual(["requeue", "slot freed"]);
    expect(echo.calls).toEqual([{}]);
  });
});
