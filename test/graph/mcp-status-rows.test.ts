/**
 * The planning service's status rows (src/storage/status-store.ts,
 * docs/decisions/0037-planning-service-over-mcp.md): what `plan_status` reads from a plan's row
 * equals, field by field, what it reads from the checkpoint (`getState`) at every point of a run with
 * a retry, a replan, a question and a stop; a row that names an older checkpoint, or none at all, is
 * not used; deleting a plan removes its row.
 */
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { PlanService, type ServedGraph } from "../../src/mcp/index.js";
import { planStatus } from "../../src/mcp/status.js";
import { requestStop } from "../../src/worker/stop-run.js";
import { codingPlan, codingReplan, createCodingTools } from "../fixtures/coding-agent.js";
import { fakeClock } from "../helpers/clock.js";
import { httpError, scriptedTool } from "../helpers/graph.js";
import { tempSqlite } from "../helpers/mcp.js";

let db: Database.Database;
let saver: SqliteSaver;
let drop: () => void;

beforeEach(() => void ({ db, saver, drop } = tempSqlite("mcp-rows-")));
afterEach(() => drop());

/** The coding agent's plan (its first fix fails its test: a replan), a flaky fetch first, and a question last. */
const draft: PlanDraft = {
  ...codingPlan,
  steps: [
    { id: "fetch", goal: "Fetching the report", tool: "fetch_report", produces: ["report"] },
    ...codingPlan.steps.map((s) => (s.id === "search" ? { ...s, dependsOn: ["fetch"] } : s)),
    { id: "ask", goal: "Asking to ship", human: { prompt: "Ship it?" }, produces: ["ship"], dependsOn: ["search"] },
  ],
};

function served() {
  const fetch = scriptedTool("fetch_report", [httpError(503), { report: "login fails" }]);
  const { tools } = createCodingTools("session.ts");
  const graph = createPlanManager({
    tools: [fetch, ...tools],
    planner: staticPlanner({ plan: draft, replan: codingReplan }),
    clock: fakeClock(),
  }).compile({ checkpointer: saver });
  const service = new PlanService({
    graphs: { g: graph as ServedGraph },
    saver,
    now: () => Date.parse("2026-11-25T12:00:00Z"),
  });
  return { service, graph, fetch };
}

/** What `plan_status` gives when read from the checkpoint itself, the way it did before status rows. */
async function fromCheckpoint(graph: ServedGraph, planId: string, running = false) {
  return planStatus(planId, "g", await graph.getState({ configurable: { thread_id: planId } }), { running });
}

const rowOf = (planId: string) =>
  db.prepare("SELECT checkpoint_id AS id FROM langgraph_replan_thread_status WHERE thread_id = ?").get(planId) as
    { id: string } | undefined;

const latestId = async (planId: string) =>
  (await saver.getTuple({ configurable: { thread_id: planId, checkpoint_ns: "" } }))!.checkpoint.id;

/** The service's status, and how many checkpoints it read to give it (1: its row served; 2: the checkpoint too). */
async function statusRead(service: PlanService, planId: string) {
  const getTuple = vi.spyOn(SqliteSaver.prototype, "getTuple");
  try {
    const status = await service.status(planId);
    return { status, reads: getTuple.mock.calls.length };
  } finally {
    getTuple.mockRestore();
  }
}

describe("plan_status from status rows", () => {
  it("equals the status read from the checkpoint through a retry, a replan, a question, a stop and the end", async () => {
    const { service, graph, fetch } = served();
    const { plan_id: planId } = await service.create({ goal: "fix the login test" });

    const expectRowServes = async (expected: { status: string; question?: string }) => {
      expect(rowOf(planId)?.id).toBe(await latestId(planId));
      const { status, reads } = await statusRead(service, planId);
      expect(reads).toBe(1);
      const slow = await fromCheckpoint(graph as ServedGraph, planId);
      expect(Object.keys(status).sort()).toEqual(Object.keys(slow).sort());
      for (const key of Object.keys(slow) as (keyof typeof slow)[])
        expect([key, status[key]]).toEqual([key, slow[key]]);
      expect([status.status, status.question?.kind]).toEqual([expected.status, expected.question]);
      return status;
    };

    const paused = await service.wait(planId, 300);
    // What a wait returns was read when the run returned; it is the checkpoint's status too.
    expect(paused).toEqual({ ...(await fromCheckpoint(graph as ServedGraph, planId)), timed_out: false });
    expect(paused.status).toBe("awaiting_human");
    const atQuestion = await expectRowServes({ status: "awaiting_human", question: "human_step" });
    expect(fetch.calls).toHaveLength(2);
    expect(atQuestion.steps.map((s) => [s.id, s.status, s.attempts])).toEqual([
      ["fetch", "succeeded", 2],
      ["search", "succeeded", 1],
      ["diagnose_v2", "succeeded", 1],
      ["fix_v2", "succeeded", 1],
      ["test_v2", "succeeded", 1],
      ["ask", "running", 0],
    ]);

    await service.stop(planId, "lunch");
    const stopped = await expectRowServes({ status: "stopped" });
    expect(stopped.error).toEqual({
      failure_reason: "stopped",
      message: "stop requested at 2026-11-25T12:00:00.000Z: lunch",
      recoverable: true,
    });

    await service.resume(planId);
    await service.wait(planId, 300);
    await expectRowServes({ status: "awaiting_human", question: "human_step" });

    await service.answer(planId, { action: "complete", output: { ship: true } });
    const ended = await service.wait(planId, 300);
    expect(ended).toEqual({ ...(await fromCheckpoint(graph as ServedGraph, planId)), timed_out: false });
    expect(ended.status).toBe("completed");
    const done = await expectRowServes({ status: "completed" });
    expect(done.plan_version).toBe(2);
    expect(done.steps.map((s) => [s.id, s.status])).toEqual([
      ["fetch", "succeeded"],
      ["search", "succeeded"],
      ["diagnose_v2", "succeeded"],
      ["fix_v2", "succeeded"],
      ["test_v2", "succeeded"],
      ["ask", "succeeded"],
    ]);
    expect(done.steps[0]!.facts).toEqual({ report: "trusted" });
    expect((await service.list()).plans.map((p) => [p.plan_id, p.status, p.goal])).toEqual([
      [planId, "completed", "fix the login test"],
    ]);
  });

  it("a row that names an older checkpoint is not used: the status is read from the checkpoint", async () => {
    const { service, graph } = served();
    const { plan_id: planId } = await service.create({ goal: "fix the login test" });
    expect((await service.wait(planId, 300)).status).toBe("awaiting_human");
    const row = rowOf(planId)!.id;
    // Stopped through the library, not the service: a newer checkpoint the row does not describe.
    await requestStop(graph as ServedGraph, { configurable: { thread_id: planId } }, { reason: "elsewhere" });
    expect(rowOf(planId)!.id).toBe(row);
    expect(await latestId(planId)).not.toBe(row);
    const { status, reads } = await statusRead(service, planId);
    expect(reads).toBe(2);
    expect(status).toEqual(await fromCheckpoint(graph as ServedGraph, planId));
    expect(status.status).toBe("stopped");
    const listed = await service.list();
    expect(listed.plans.map((p) => [p.plan_id, p.status])).toEqual([[planId, "stopped"]]);
  });

  it("a plan run without the service has no row: its status is read from the checkpoint; delete removes a row", async () => {
    const { service, graph } = served();
    const planId = "direct--g";
    await graph.invoke({ goal: "run by hand" } as never, { configurable: { thread_id: planId } });
    const { status, reads } = await statusRead(service, planId);
    expect(reads).toBe(2);
    expect(rowOf(planId)).toBeUndefined();
    expect(status).toEqual(await fromCheckpoint(graph as ServedGraph, planId));
    expect(status.status).toBe("awaiting_human");

    const { plan_id: other } = await service.create({ goal: "fix it again" });
    await service.wait(other, 300);
    expect(rowOf(other)).toBeDefined();
    await service.delete(other);
    expect(rowOf(other)).toBeUndefined();
  });
});
