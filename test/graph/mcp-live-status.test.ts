/**
 * `plan_status` of a plan this service is running is read from the run's own values stream
 * (src/mcp/live-status.ts,
 * docs/decisions/0066-live-status-of-running-plans.md): at every point of
 * a run with a retry it deep-equals what the checkpoint gives, without reading a checkpoint; once
 * the run returns it is read from the checkpoint's status row again; the kept runs are bounded.
 */
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { PlanService, type ServedGraph } from "../../src/mcp/index.js";
import { LiveStatuses, MAX_LIVE } from "../../src/mcp/live-status.js";
import { planStatus, type StatusValues } from "../../src/mcp/status.js";
import { fakeClock } from "../helpers/clock.js";
import { httpError, scriptedTool } from "../helpers/graph.js";
import { tempSqlite } from "../helpers/mcp.js";

let saver: SqliteSaver;
let drop: () => void;

beforeEach(() => void ({ saver, drop } = tempSqlite("mcp-live-")));
afterEach(() => drop());

const draft: PlanDraft = {
  steps: [
    { id: "fetch", goal: "Fetching the report", tool: "fetch", produces: ["report"] },
    { id: "fix", goal: "Fixing it", tool: "fix", produces: ["patch"], dependsOn: ["fetch"] },
    { id: "ship", goal: "Shipping it", tool: "ship", produces: ["shipped"], dependsOn: ["fix"] },
  ],
};

/** Tools whose every call waits until the test lets it go: `entered` resolves as the n-th call starts. */
function gatedTools() {
  const calls: { name: string; release: () => void }[] = [];
  const waiting: ((n: number) => void)[] = [];
  const gated = (name: string, results: unknown[]) =>
    scriptedTool(
      name,
      results.map((result) => async () => {
        await new Promise<void>((release) => {
          calls.push({ name, release });
          for (const wake of waiting.splice(0)) wake(calls.length);
        });
        if (result instanceof Error) throw result;
        return result;
      }),
    );
  const entered = async (n: number) => {
    while (calls.length < n) await new Promise<number>((resolve) => waiting.push(resolve));
    return calls[n - 1]!;
  };
  const tools = [
    gated("fetch", [httpError(503), { report: "login fails" }]),
    gated("fix", [{ patch: "p1" }]),
    gated("ship", [{ shipped: true }]),
  ];
  return { tools, entered };
}

function served() {
  const { tools, entered } = gatedTools();
  const graph = createPlanManager({ tools, planner: staticPlanner({ plan: draft }), clock: fakeClock() }).compile({
    checkpointer: saver,
  }) as ServedGraph;
  const service = new PlanService({ graphs: { g: graph }, saver, now: () => Date.parse("2026-11-25T12:00:00Z") });
  return { service, graph, entered };
}

/** The service's status, and how many checkpoints it read to give it. */
async function statusRead(service: PlanService, planId: string) {
  const getTuple = vi.spyOn(SqliteSaver.prototype, "getTuple");
  try {
    const status = await service.status(planId);
    return { status, reads: getTuple.mock.calls.length };
  } finally {
    getTuple.mockRestore();
  }
}

describe("plan_status of a running plan, from the run's stream", () => {
  it("deep-equals the checkpoint's status at each tool call of a run with a retry, reading no checkpoint", async () => {
    const { service, graph, entered } = served();
    const { plan_id: planId } = await service.create({ goal: "fix the login test" });
    const seen: [string, number, number, string[]][] = [];
    for (const [n, name] of [
      [1, "fetch"],
      [2, "fetch"],
      [3, "fix"],
      [4, "ship"],
    ] as const) {
      const call = await entered(n);
      expect(call.name).toBe(name);
      const { status, reads } = await statusRead(service, planId);
      expect(reads).toBe(0);
      const checkpoint = planStatus(planId, "g", await graph.getState({ configurable: { thread_id: planId } }), {
        running: true,
      });
      expect(status).toEqual({ ...checkpoint, server: { live: true } });
      seen.push([
        status.status,
        status.progress.done,
        status.steps[0]!.attempts,
        status.steps.map((s) => `${s.id}:${s.status}:${Object.keys(s.facts).join(",")}`),
      ]);
      call.release();
    }
    // A tool is called within the superstep that starts its attempt: the checkpoint (and the stream's
    // last values) show the superstep before it, here both alike.
    expect(seen).toEqual([
      ["running", 0, 0, ["fetch:pending:", "fix:pending:", "ship:pending:"]],
      ["running", 0, 1, ["fetch:pending:", "fix:pending:", "ship:pending:"]],
      ["running", 0, 1, ["fetch:pending:", "fix:pending:", "ship:pending:"]],
      ["running", 1, 2, ["fetch:succeeded:report", "fix:running:", "ship:pending:"]],
    ]);

    const ended = await service.wait(planId, 300);
    expect(ended.status).toBe("completed");
    // The run returned: its status is its checkpoint's status row again, no longer kept in memory.
    const after = await statusRead(service, planId);
    expect(after.reads).toBe(1);
    expect(after.status).toEqual(
      planStatus(planId, "g", await graph.getState({ configurable: { thread_id: planId } }), { running: false }),
    );
  });
});

describe("LiveStatuses", () => {
  const run = (live: LiveStatuses, planId: string, goal: string, counts = true) =>
    live.tap(planId, () => counts)({ goal, status: "running" } satisfies StatusValues);

  it("keeps at most its bound of running plans, dropping the oldest first", () => {
    expect(MAX_LIVE).toBe(1_000);
    const live = new LiveStatuses(2);
    run(live, "a", "goal a");
    run(live, "b", "goal b");
    run(live, "a", "goal a again");
    expect([live.size, live.core("a")?.goal]).toEqual([2, "goal a again"]);
    run(live, "c", "goal c");
    expect(live.size).toBe(2);
    expect([live.core("a"), live.core("b")?.goal, live.core("c")?.goal]).toEqual([undefined, "goal b", "goal c"]);
    expect(live.core("c")).toMatchObject({ stored: "running", running: true, progress: { done: 0, total: 0 } });
    live.forget("b");
    expect([live.size, live.core("b")]).toEqual([1, undefined]);
  });

  it("keeps nothing before the run holds its thread, nor an interrupt's chunk", () => {
    const live = new LiveStatuses();
    run(live, "a", "goal a", false);
    live.tap("b", () => true)({ __interrupt__: [] });
    expect(live.size).toBe(0);
  });
});
