/**
 * A `langgraph-replan mcp` server's runs outlive it: the official SDK client's `close()` kills a
 * stdio server whose step is still in flight (SIGTERM after 2 s, SIGKILL after 4 s), and the next
 * server started on the same database takes the run up, with no `plan_resume`, settling the call
 * cut in flight through the effect journal. Until then `plan_status` says no live server runs the
 * plan and shows the attempt in flight.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { PlanService, RunRecovery, type ServedGraph } from "../../src/mcp/index.js";
import { scriptedTool } from "../helpers/graph.js";
import { startStdio, until, weatherDraft } from "../helpers/mcp.js";
import { graph as shop } from "../fixtures/mcp/effects-graph.js";
import { graph as weather } from "../fixtures/mcp/graph.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-recovery-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** `langgraph-replan mcp` over stdio on `db`, serving the fixture's `shop` graph, as an agent spawns it. */
const start = (db: string, config = "test/fixtures/mcp/effects.json", env: Record<string, string> = {}) =>
  startStdio({ db, config, env: { MCP_TEST_DIR: dir, ...env } });

/** Resolves once process `pid` has exited (the SDK sends SIGKILL and does not wait for it). */
async function gone(pid: number) {
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  while (alive()) await new Promise((r) => setTimeout(r, 20));
}

const charges = () => readFileSync(join(dir, "charges"), "utf8").split("\n").filter(Boolean);

describe("a server that dies mid-step on SQLite", () => {
  it("the next server takes the run up at launch and settles the cut charge by its verify probe: one charge, no plan_resume", async () => {
    const db = join(dir, "plans.sqlite");
    const first = await start(db);
    const created = await first.call("plan_create", { goal: "pay for order 17" });
    const planId = created.structuredContent.plan_id as string;
    await until(join(dir, "charge.reached"));
    const live = await first.call("plan_status", { plan_id: planId });
    expect(live.structuredContent).toMatchObject({ status: "running", server: { live: true } });
    expect(live.structuredContent.message).toBeUndefined();
    // The SDK closes stdin, then SIGTERMs after 2 s and SIGKILLs after 4 s: the charge never answers.
    const pid = first.transport.pid!;
    await first.client.close();
    await gone(pid);
    expect(charges()).toHaveLength(1);

    // Before any server takes it up: no live server, and the charge in flight as the journal has it.
    const handle = new Database(db);
    try {
      const saver = new SqliteSaver(handle);
      const service = new PlanService({
        graphs: {
          shop: (shop as unknown as { builder: { compile(o: object): ServedGraph } }).builder.compile({
            checkpointer: saver,
          }),
        },
        saver,
      });
      const intent = handle.prepare("SELECT key, attempt, at, result FROM langgraph_replan_effects").all() as {
        key: string;
        attempt: number;
        at: string;
        result: string | null;
      }[];
      expect(intent).toEqual([{ key: charges()[0]!.split(" ")[0], attempt: 1, at: expect.any(String), result: null }]);
      const cut = (await service.status(planId)) as any;
      expect(cut.status).toBe("running");
      expect(cut.server).toEqual({ live: false });
      expect(cut.message).toBe(
        `no live server runs plan "${planId}": the process that ran it ended mid-step; ` +
          "a langgraph-replan mcp server started on this database takes it up (or call plan_resume)",
      );
      expect(cut.steps.map((s: object) => ({ ...s, facts: undefined }))).toEqual([
        {
          id: "pay",
          goal: "charge 40",
          status: "running",
          attempts: 1,
          started_at: intent[0]!.at,
          in_doubt: true,
          facts: undefined,
        },
        { id: "mail", goal: "send the receipt", status: "pending", attempts: 0, facts: undefined },
      ]);
      expect(cut.timing.started_at).toBe(intent[0]!.at);
    } finally {
      handle.close();
    }

    // A charge called again would answer at once now, and be counted.
    writeFileSync(join(dir, "gate"), "open");
    const second = await start(db);
    try {
      const done = await second.call("plan_wait", { plan_id: planId, timeout_s: 60 });
      expect(done.structuredContent).toMatchObject({
        status: "completed",
        timed_out: false,
        progress: { done: 2, total: 2 },
      });
      // A finished run has no server to speak of.
      expect(done.structuredContent.server).toBeUndefined();
      expect(
        done.structuredContent.steps.map((s: { id: string; status: string; attempts: number }) => [
          s.id,
          s.status,
          s.attempts,
        ]),
      ).toEqual([
        ["pay", "succeeded", 1],
        ["mail", "succeeded", 1],
      ]);
      expect(charges()).toHaveLength(1);
      const report = await second.call("plan_report", { plan_id: planId, format: "json" });
      expect(report.structuredContent.report.metrics).toMatchObject({
        effectsVerified: 1,
        effectsInDoubt: 0,
        effectsHappened: 0,
        toolAttempts: 2,
        decisions: 1,
      });
    } finally {
      await second.client.close();
    }
    const handle2 = new Database(db);
    try {
      const saver = new SqliteSaver(handle2);
      const state = (await (shop as unknown as { builder: { compile(o: object): ServedGraph } }).builder
        .compile({ checkpointer: saver })
        .getState({ configurable: { thread_id: planId } })) as { values: any };
      expect(
        state.values.decisions.map((d: { stepId: string; rule: string; attempt: number }) => [
          d.stepId,
          d.rule,
          d.attempt,
        ]),
      ).toEqual([["pay", "effect.verified", 1]]);
      expect(
        state.values.sideEffects.map((e: { stepId: string; idempotencyKey: string }) => [e.stepId, e.idempotencyKey]),
      ).toEqual([["pay", charges()[0]!.split(" ")[0]]]);
      expect(state.values.facts.sent.value).toBe("receipt r-40");
    } finally {
      handle2.close();
    }
  }, 90_000);
});

describe("a server told to stop (SIGTERM)", () => {
  it("ends its run at the next step boundary: a read-only call is cut and its attempt checkpointed, for the next server", async () => {
    const db = join(dir, "plans.sqlite");
    const gate = join(dir, "forecast-gate");
    const first = await start(db, "test/fixtures/mcp/langgraph.json", { MCP_TEST_GATE: gate });
    const created = await first.call("plan_create", { goal: "a day out" });
    const planId = created.structuredContent.plan_id as string;
    await until(`${gate}.reached`);
    const pid = first.transport.pid!;
    // stdin closed, then SIGTERM 2 s later: the forecast (no key) is cut there, not left to the SIGKILL.
    await first.client.close();
    await gone(pid);
    const handle = new Database(db);
    try {
      const saver = new SqliteSaver(handle);
      const served = (weather as unknown as { builder: { compile(o: object): ServedGraph } }).builder.compile({
        checkpointer: saver,
      });
      const state = (await served.getState({ configurable: { thread_id: planId } })) as { values: any };
      expect(state.values.status).toBe("running");
      // Without the stop the checkpoint would end before the attempt (no record of "fetch" at all).
      expect(state.values.steps.fetch).toMatchObject({ status: "running", attempts: 1 });
      const cut = await new PlanService({ graphs: { weather: served }, saver }).status(planId);
      expect(cut.server).toEqual({ live: false });
      expect(cut.steps.map(({ id, status, attempts, started_at }) => ({ id, status, attempts, started_at }))).toEqual([
        { id: "fetch", status: "running", attempts: 1, started_at: state.values.steps.fetch.startedAt },
        { id: "plan", status: "pending", attempts: 0, started_at: undefined },
      ]);
    } finally {
      handle.close();
    }
    writeFileSync(gate, "open");
    const second = await start(db, "test/fixtures/mcp/langgraph.json", { MCP_TEST_GATE: gate });
    try {
      const done = await second.call("plan_wait", { plan_id: planId, timeout_s: 60 });
      expect(done.structuredContent).toMatchObject({ status: "completed", progress: { done: 2, total: 2 } });
      // The cut attempt is called again as the same attempt: not charged twice.
      expect(done.structuredContent.steps.map((s: { id: string; attempts: number }) => [s.id, s.attempts])).toEqual([
        ["fetch", 1],
        ["plan", 1],
      ]);
    } finally {
      await second.client.close();
    }
  }, 90_000);
});

/** A plan whose first step's first call never answers (its process "dies" in it); later calls answer at once. */
function cutOnce() {
  const forecast = scriptedTool("forecast", [() => new Promise(() => undefined), { forecast: "sunny" }]);
  const planDay = scriptedTool("planDay", [{ day: "picnic" }]);
  const draft = weatherDraft;

  const manager = createPlanManager({ tools: [forecast, planDay], planner: staticPlanner({ plan: draft }) });
  /** One server's view of the file: its own connection, saver and graph, as another process would have. */
  const server = (db: string) => {
    const handle = new Database(db);
    const saver = new SqliteSaver(handle);
    const service = new PlanService({ graphs: { weather: manager.compile({ checkpointer: saver }) as never }, saver });
    return { handle, saver, service };
  };
  return { forecast, planDay, server };
}

/** Lets the lease of a process that "died" here lapse, as a dead holder's does (storage/sqlite-claim.ts). */
const lapse = (handle: Database.Database) => handle.prepare("DELETE FROM langgraph_replan_thread_claims").run();

describe("taking up runs no live process holds (PlanService.takeUp, RunRecovery)", () => {
  it("two servers taking up the same cut run at once: it runs once, and neither reports an error", async () => {
    const db = join(dir, "plans.sqlite");
    const { forecast, planDay, server } = cutOnce();
    const dead = server(db);
    const { plan_id } = await dead.service.create({ goal: "a day out" });
    while (forecast.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
    lapse(dead.handle);
    const [a, b] = [server(db), server(db)];
    const outcomes = await Promise.all([a.service.takeUp(plan_id), b.service.takeUp(plan_id)]);
    await Promise.all([a.service.settled(), b.service.settled()]);
    // Each may have started a run; the run's claim let exactly one of them call the tool.
    expect(outcomes.every((o) => o === "started" || o === "held")).toBe(true);
    expect(forecast.calls).toHaveLength(2);
    expect(planDay.calls).toHaveLength(1);
    for (const { service } of [a, b]) {
      const status = await service.status(plan_id);
      expect(status).toMatchObject({ status: "completed", progress: { done: 2, total: 2 } });
      expect(status.error).toBeUndefined();
      expect(status.steps.map((s) => [s.id, s.status, s.attempts])).toEqual([
        ["fetch", "succeeded", 1],
        ["plan", "succeeded", 1],
      ]);
    }
    for (const { handle } of [a, b]) handle.close();
  });

  it("RunRecovery takes up only the runs nobody holds: not a held one, not a finished, stopped or waiting one", async () => {
    const db = join(dir, "plans.sqlite");
    const { forecast, server } = cutOnce();
    const dead = server(db);
    const cut = await dead.service.create({ goal: "a day out" });
    while (forecast.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
    // A plan waiting for an answer, and one an operator stopped: theirs is a person's move, not a server's.
    const ask: PlanDraft = { steps: [{ id: "ask", goal: "ask", human: { prompt: "Go?" } }] };
    const waiting = await dead.service.create({ goal: "ask first", plan: ask });
    const stopped = await dead.service.create({ goal: "ask, then stop", plan: ask });
    await dead.service.wait(waiting.plan_id, 30);
    await dead.service.wait(stopped.plan_id, 30);
    await dead.service.stop(stopped.plan_id);
    expect((await dead.service.status(waiting.plan_id)).status).toBe("awaiting_human");
    expect((await dead.service.status(stopped.plan_id)).status).toBe("stopped");
    const other = server(db);
    const recovery = new RunRecovery(other.service, other.saver, { everyMs: 0 });
    const takeUp = vi.spyOn(other.service, "takeUp");
    // Its claim is still held (this process is alive): a live server runs it. The other two are
    // settled by their status rows, not read one by one.
    expect(await recovery.scan()).toEqual([]);
    expect(takeUp.mock.calls).toEqual([[cut.plan_id]]);
    expect(await takeUp.mock.results[0]!.value).toBe("held");
    expect((await other.service.status(cut.plan_id)).server).toEqual({ live: true });
    lapse(dead.handle);
    expect((await other.service.status(cut.plan_id)).server).toEqual({ live: false });
    expect(await recovery.scan()).toEqual([cut.plan_id]);
    await other.service.settled();
    expect((await other.service.status(cut.plan_id)).status).toBe("completed");
    // Finished now: nothing to take up again, and its row says so.
    takeUp.mockClear();
    expect(await recovery.scan()).toEqual([]);
    expect(takeUp).not.toHaveBeenCalled();
    await recovery.close();
    expect(await recovery.scan()).toEqual([]);
    other.handle.close();
  });

  it("a run this process drives outside the service is live and not taken up; a saver with in-process claims is never taken up from", async () => {
    const { forecast } = cutOnce();
    const manager = createPlanManager({
      tools: [forecast, scriptedTool("planDay", [{ day: "picnic" }])],
      planner: staticPlanner({ plan: { steps: [{ id: "fetch", goal: "fetch", tool: "forecast" }] } }),
    });
    const saver = new MemorySaver();
    const graph = manager.compile({ checkpointer: saver });
    const service = new PlanService({ graphs: { weather: graph as never }, saver });
    void graph.invoke({ goal: "held here" }, { configurable: { thread_id: "own--weather" } });
    while (forecast.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect((await service.status("own--weather")).server).toEqual({ live: true });
    expect(await service.takeUp("own--weather")).toBe("held");
    // A run that stopped before its first step (as one cut mid-step would look) on a saver whose
    // claims reach this process only: another process could be running it, so it is left alone.
    const stopsEarly = manager.compile({ checkpointer: saver, interruptBefore: ["executor"] });
    await stopsEarly.invoke({ goal: "stopped early" }, { configurable: { thread_id: "early--weather" } });
    const early = await service.status("early--weather");
    expect([early.status, early.question, early.server]).toEqual(["running", undefined, undefined]);
    expect(await service.takeUp("early--weather")).toBe("idle");
  });

  it("refuses an interval that is not a whole number of milliseconds", () => {
    const { server } = cutOnce();
    const one = server(join(dir, "plans.sqlite"));
    for (const everyMs of [Number.NaN, -1, 1.5])
      expect(() => new RunRecovery(one.service, one.saver, { everyMs })).toThrow(
        expect.objectContaining({ code: "invalid_options", path: "everyMs" }),
      );
    one.handle.close();
  });
});
