/**
 * A driver's say over a running thread (what the workers use): a stop or a pause it asks for is
 * taken at the next step boundary, without pausing the run after every executor visit and without
 * leaving a tool call in flight.
 */
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { isRunPaused, RUN_CONTROL, type RunControl, type RunRequest } from "../../src/runtime/run-control.js";
import { resumeStopped } from "../../src/worker/stop-run.js";

/** Steps s0…s3 in a chain, plus `side` beside s1 (both depend on s0), so that two calls can be in flight. */
const plan: PlanDraft = {
  steps: [
    { id: "s0", goal: "step 0", tool: "echo", args: { n: 0 }, produces: ["v0"] },
    { id: "s1", goal: "step 1", tool: "echo", args: { n: 1 }, produces: ["v1"], dependsOn: ["s0"] },
    { id: "side", goal: "beside 1", tool: "echo", args: { n: 9 }, produces: ["v9"], dependsOn: ["s0"] },
    { id: "s2", goal: "step 2", tool: "echo", args: { n: 2 }, produces: ["v2"], dependsOn: ["s1"] },
    { id: "s3", goal: "step 3", tool: "echo", args: { n: 3 }, produces: ["v3"], dependsOn: ["s2"] },
  ],
};

function setup() {
  const log: string[] = [];
  const control = { wanted: undefined as RunRequest | undefined, ask: (): void => undefined };
  let sideStarted!: () => void;
  let oneEnded!: () => void;
  const gates = { side: new Promise<void>((r) => (sideStarted = r)), one: new Promise<void>((r) => (oneEnded = r)) };
  const echo = tool(
    async (args: { n: number }) => {
      log.push(`start ${args.n}`);
      // s1 and `side` run together; the driver asks for something while they do; `side` ends last.
      if (args.n === 1) control.ask();
      if (args.n === 1) await gates.side;
      if (args.n === 9) sideStarted();
      if (args.n === 9) await gates.one;
      if (args.n === 1) oneEnded();
      log.push(`end ${args.n}`);
      return { [`v${args.n}`]: args.n };
    },
    { name: "echo", description: "echo", schema: z.object({ n: z.number() }) },
  );
  const graph = createPlanManager({ tools: [echo], planner: staticPlanner({ plan }) }).compile({
    checkpointer: new MemorySaver(),
  });
  const runControl: RunControl = { wanted: () => control.wanted };
  return Object.assign(control, { log, graph, runControl });
}

describe("a driver's stop or pause, taken at the next step boundary", () => {
  it("a stop asked while two steps run: nothing new starts, both keep their results, the run ends stopped", async () => {
    const t = setup();
    t.ask = () => void (t.wanted = { kind: "stop", stop: { requestedAt: "2026-01-01T00:00:00.000Z", reason: "x" } });
    const config = { configurable: { thread_id: "rc-stop", [RUN_CONTROL]: t.runControl } };
    await t.graph.invoke({ goal: "chain" }, config);
    const values = (await t.graph.getState(config)).values;
    expect(values.status).toBe("stopped");
    expect(values.outcome.summary).toBe("Stopped by an operator: x. 3 of 5 steps succeeded; resume to carry on.");
    expect(values.stop).toEqual({ requestedAt: "2026-01-01T00:00:00.000Z", reason: "x", previousStatus: "running" });
    expect(t.log).toEqual(["start 0", "end 0", "start 1", "start 9", "end 1", "end 9"]);

    const plain = { configurable: { thread_id: "rc-stop" } };
    await resumeStopped(t.graph, plain);
    expect((await t.graph.getState(plain)).values.status).toBe("completed");
    expect(t.log.slice(6)).toEqual(["start 2", "end 2", "start 3", "end 3"]);
  });

  it("a pause: once nothing is in flight the run ends with RunPaused at that boundary, and a new run carries on", async () => {
    const t = setup();
    t.ask = () => void (t.wanted = { kind: "pause" });
    const config = { configurable: { thread_id: "rc-pause", [RUN_CONTROL]: t.runControl } };
    const ended = await t.graph.invoke({ goal: "chain" }, config).catch((e: unknown) => e);
    expect(isRunPaused(ended)).toBe(true);
    expect(t.log).toEqual(["start 0", "end 0", "start 1", "start 9", "end 1", "end 9"]);
    const plain = { configurable: { thread_id: "rc-pause" } };
    const paused = await t.graph.getState(plain);
    expect(paused.next).toEqual(["executor"]);
    expect(Object.entries(paused.values.steps).map(([id, s]) => `${id}:${(s as { status: string }).status}`)).toEqual([
      "s0:succeeded",
      "s1:succeeded",
      "side:succeeded",
    ]);

    await t.graph.invoke(null, plain);
    expect((await t.graph.getState(plain)).values.status).toBe("completed");
    expect(t.log.slice(6)).toEqual(["start 2", "end 2", "start 3", "end 3"]);
  });
});
