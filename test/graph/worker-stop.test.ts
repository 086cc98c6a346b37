import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { createPlanManager, resumeRun, staticPlanner } from "../../src/index.js";
import { requestStop, resumeStopped } from "../../src/worker/stop-run.js";
import { isPlanManagerError } from "../../src/errors.js";
import { operatorView } from "../../src/views/operator-view.js";
import { userView } from "../../src/views/user-view.js";

const calls: string[] = [];
const echo = tool(
  async (args: { n: number }) => {
    calls.push(`echo:${args.n}`);
    return { [`v${args.n}`]: args.n };
  },
  { name: "echo", description: "echo", schema: z.object({ n: z.number() }) },
);
const plan = {
  steps: [
    { id: "a", goal: "first", tool: "echo", args: { n: 1 }, produces: ["v1"] },
    { id: "ask", goal: "a person checks", human: { prompt: "check v1" }, dependsOn: ["a"] },
    { id: "b", goal: "second", tool: "echo", args: { n: 2 }, produces: ["v2"], dependsOn: ["ask"] },
  ],
};
const compile = () =>
  createPlanManager({ tools: [echo], planner: staticPlanner({ plan }) }).compile({ checkpointer: new MemorySaver() });
const at = () => Date.parse("2026-01-01T00:00:00Z");

describe("an operator's stop", () => {
  it("stops a paused thread as resumable, keeps the question, and resumes to the same end as without a stop", async () => {
    calls.length = 0;
    const graph = compile();
    const config = { configurable: { thread_id: "stop-1" } };
    await graph.invoke({ goal: "two echoes" }, config);
    expect((await graph.getState(config)).values.status).toBe("awaiting_human");

    await requestStop(graph, config, { reason: "maintenance", now: at });
    const stopped = (await graph.getState(config)).values;
    expect(stopped.status).toBe("stopped");
    expect(stopped.outcome).toEqual({
      summary: "Stopped by an operator: maintenance. 1 of 3 steps succeeded; resume to carry on.",
      failureReason: "stopped",
      message: "stop requested at 2026-01-01T00:00:00.000Z: maintenance",
      recoverable: true,
    });
    expect(stopped.stop).toEqual({
      requestedAt: "2026-01-01T00:00:00.000Z",
      reason: "maintenance",
      previousStatus: "awaiting_human",
    });
    expect(userView(stopped as never).at(-1)).toBe("Stopped by an operator; it can be resumed.");
    expect(operatorView(stopped as never, { now: at() })[1]).toBe("status: stopped (attempt 0/1)");
    // A stopped thread does not run on a plain invoke: only resumeStopped reopens it.
    const refused = await graph.invoke(null, config).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "thread_stopped" });
    expect((await graph.getState(config)).values.status).toBe("stopped");

    await resumeStopped(graph, config);
    const reopened = await graph.getState(config);
    expect(reopened.values.status).toBe("awaiting_human");
    expect(reopened.values.stop).toBeNull();
    expect(reopened.values.outcome).toBeUndefined();
    expect(reopened.tasks.flatMap((t) => t.interrupts)[0]?.value).toMatchObject({ kind: "human_step", stepId: "ask" });
    await resumeRun(graph, config, { action: "complete", output: { ok: true } });
    const done = (await graph.getState(config)).values;
    expect(done.status).toBe("completed");
    expect(done.facts.v2?.value).toBe(2);
    expect(calls).toEqual(["echo:1", "echo:2"]);
  });

  it("refuses a finished thread, a stopped one and one that never ran, naming why", async () => {
    const graph = compile();
    const config = { configurable: { thread_id: "stop-2" } };
    const refusal = async () =>
      requestStop(graph, config).then(
        () => "no error",
        (e: unknown) => e,
      );
    let error = await refusal();
    expect(isPlanManagerError(error) && [error.code, error.message]).toEqual([
      "invalid_update",
      'thread "stop-2" has not started: there is nothing to stop',
    ]);
    await graph.invoke({ goal: "two echoes" }, config);
    await requestStop(graph, config);
    error = await refusal();
    expect(isPlanManagerError(error) && error.message).toBe(
      'thread "stop-2" is already stopped (resume it to carry on)',
    );
    await resumeStopped(graph, config);
    await resumeRun(graph, config, { action: "complete", output: {} });
    error = await refusal();
    expect(isPlanManagerError(error) && error.message).toBe(
      'thread "stop-2" has finished (status: completed): there is nothing to stop',
    );
    const notStopped = await resumeStopped(graph, config).then(
      () => "no error",
      (e: unknown) => e,
    );
    expect(isPlanManagerError(notStopped) && notStopped.message).toBe(
      'thread "stop-2" is not stopped (status: completed)',
    );
  });
});
