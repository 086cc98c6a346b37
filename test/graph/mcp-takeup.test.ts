/**
 * What a server's take-up of runs (mcp/recovery.ts, `PlanService.takeUp`) must leave alone, and
 * what it must not be stopped by: a live process's run whatever the wall clock says, a static
 * breakpoint, one unreadable thread among many, and a keyed create cut before its first checkpoint.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { PlanService, RunRecovery, takeUpRuns, type ServedGraph } from "../../src/mcp/index.js";
import { CALLS_HELD, RUN_CONTROL, type RunControl } from "../../src/runtime/run-control.js";
import { BackgroundRuns, MAX_FAILURES } from "../../src/mcp/runs.js";
import { claimSqliteThread, sqliteClaimHolder } from "../../src/storage/sqlite-claim.js";
import { scriptedTool } from "../helpers/graph.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-takeup-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const payDraft: PlanDraft = { steps: [{ id: "pay", goal: "pay", tool: "pay", produces: ["paid"] }] };

/** A server on `db`: its own connection, saver and service, as another process would have. */
function serverOn(db: string, graphOf: (saver: SqliteSaver) => ServedGraph) {
  const handle = new Database(db);
  const saver = new SqliteSaver(handle);
  return { handle, saver, service: new PlanService({ graphs: { w: graphOf(saver) }, saver }) };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("a live process's claim on SQLite", () => {
  it("holds its thread on this host whatever the lease says: a forward clock step does not let another server take the run up", async () => {
    const db = join(dir, "plans.sqlite");
    let release!: (v: unknown) => void;
    const slow = new Promise((r) => (release = r));
    const pay = scriptedTool("pay", [() => slow, { paid: 2 }]);
    const manager = createPlanManager({ tools: [pay], planner: staticPlanner({ plan: payDraft }) });
    const a = serverOn(db, (saver) => manager.compile({ checkpointer: saver }) as unknown as ServedGraph);
    const { plan_id } = await a.service.create({ goal: "pay" });
    while (pay.calls.length === 0) await tick();
    const real = Date.now;
    // The wall clock steps forward past the lease (NTP), as a stalled event loop also would.
    Date.now = () => real() + 31_000;
    try {
      const b = serverOn(db, (saver) => manager.compile({ checkpointer: saver }) as unknown as ServedGraph);
      const started = await new RunRecovery(b.service, b.saver, { everyMs: 0 }).scan();
      expect(started).toEqual([]);
      expect((await b.service.status(plan_id)).server).toEqual({ live: true });
      b.handle.close();
    } finally {
      Date.now = real;
    }
    expect(pay.calls.length).toBe(1);
    release({ paid: 1 });
    await a.service.settled();
    expect(pay.calls.length).toBe(1);
    expect((await a.service.status(plan_id)).status).toBe("completed");
    a.handle.close();
  });

  it("a claim row from a dead pid on this host is not held; one from another host holds until its lease ends", () => {
    const handle = new Database(join(dir, "claims.sqlite"));
    const mine = claimSqliteThread(handle, "t", "");
    expect("release" in mine).toBe(true);
    // Another process on this host that has exited: a pid that cannot be running.
    handle.prepare("UPDATE langgraph_replan_thread_claims SET pid = ? WHERE thread_id = 't'").run(2 ** 22 + 7);
    expect(sqliteClaimHolder(handle, "t", "", () => Date.now() - 60_000)).toBeUndefined();
    handle
      .prepare("UPDATE langgraph_replan_thread_claims SET pid = ?, host = ? WHERE thread_id = 't'")
      .run(process.pid, "another-host");
    const lease = (
      handle.prepare("SELECT expires_at FROM langgraph_replan_thread_claims").get() as { expires_at: number }
    ).expires_at;
    expect(sqliteClaimHolder(handle, "t", "", () => lease - 1)).toEqual({ pid: process.pid, host: "another-host" });
    expect(sqliteClaimHolder(handle, "t", "", () => lease)).toBeUndefined();
    // The claim-taking path reads the same way: another host's live lease refuses, a lapsed one is taken.
    expect(claimSqliteThread(handle, "t", "", () => lease - 1)).toEqual({ pid: process.pid, host: "another-host" });
    const taken = claimSqliteThread(handle, "t", "", () => lease);
    expect("release" in taken).toBe(true);
    // This process's own live claim holds whatever the clock says, for the read and for the claim.
    expect(sqliteClaimHolder(handle, "t", "", () => lease + 10 ** 9)).toEqual({
      pid: process.pid,
      host: expect.any(String),
    });
    expect("pid" in claimSqliteThread(handle, "t", "", () => lease + 10 ** 9)).toBe(true);
    (taken as { release(): void }).release();
    (mine as { release(): void }).release();
    // A row of this process that none of its claims has (its release could not delete it) holds nothing.
    handle
      .prepare(
        "INSERT INTO langgraph_replan_thread_claims (thread_id, checkpoint_ns, token, pid, host, expires_at) " +
          "VALUES ('t', '', 'left-over', ?, ?, ?)",
      )
      .run(process.pid, hostname(), Date.now() + 60_000);
    expect(sqliteClaimHolder(handle, "t", "")).toBeUndefined();
    handle.close();
  });
});

describe("a static breakpoint", () => {
  it("is a plan waiting where its graph stops it (interruptBefore), not a cut run: take-up leaves it", async () => {
    const db = join(dir, "plans.sqlite");
    const pay = scriptedTool("pay", [{ paid: 1 }]);
    const manager = createPlanManager({ tools: [pay], planner: staticPlanner({ plan: payDraft }) });
    const a = serverOn(
      db,
      (saver) => manager.compile({ checkpointer: saver, interruptBefore: ["executor"] }) as unknown as ServedGraph,
    );
    const { plan_id } = await a.service.create({ goal: "review before paying" });
    await a.service.settled();
    const recovery = new RunRecovery(a.service, a.saver, { everyMs: 0 });
    expect(await recovery.scan()).toEqual([]);
    await a.service.settled();
    expect(pay.calls.length).toBe(0);
    const waiting = await a.service.status(plan_id);
    expect(waiting.server).toEqual({ live: false });
    expect(waiting.message).toBe(
      `plan "${plan_id}" waits at a breakpoint of its graph (interruptBefore / interruptAfter): call plan_resume to carry it on`,
    );
    // plan_resume runs past it when asked.
    await a.service.resume(plan_id);
    await a.service.settled();
    expect(pay.calls.length).toBe(1);
    expect((await a.service.status(plan_id)).status).toBe("completed");
    a.handle.close();
  });

  it("interruptAfter: the checkpoint after the node is left for plan_resume too", async () => {
    const db = join(dir, "plans.sqlite");
    const pay = scriptedTool("pay", [{ paid: 1 }]);
    const manager = createPlanManager({ tools: [pay], planner: staticPlanner({ plan: payDraft }) });
    const a = serverOn(
      db,
      (saver) => manager.compile({ checkpointer: saver, interruptAfter: ["planner"] }) as unknown as ServedGraph,
    );
    await a.service.create({ goal: "look at the plan first" });
    await a.service.settled();
    expect(await new RunRecovery(a.service, a.saver, { everyMs: 0 }).scan()).toEqual([]);
    await a.service.settled();
    expect(pay.calls.length).toBe(0);
    a.handle.close();
  });
});

describe("an unreadable thread", () => {
  it("does not stop the take-up of the plans listed after it; it is reported once per checkpoint", async () => {
    const db = join(dir, "plans.sqlite");
    const pay = scriptedTool("pay", [() => new Promise(() => undefined), { paid: 2 }]);
    const manager = createPlanManager({ tools: [pay], planner: staticPlanner({ plan: payDraft }) });
    const graphOf = (saver: SqliteSaver) => manager.compile({ checkpointer: saver }) as unknown as ServedGraph;
    const a = serverOn(db, graphOf);
    const { plan_id } = await a.service.create({ goal: "pay" });
    while (pay.calls.length === 0) await tick();
    // The server dies: its claim goes with it.
    a.handle.prepare("DELETE FROM langgraph_replan_thread_claims").run();
    // A thread listed before the cut plan (newest first) whose checkpoint cannot be read.
    a.handle
      .prepare(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) " +
          "VALUES ('bad--w', '', 'zzzzzzzz', NULL, 'json', ?, ?)",
      )
      .run(Buffer.from("{not json"), Buffer.from("{}"));
    const b = serverOn(db, graphOf);
    const errors: unknown[] = [];
    const recovery = new RunRecovery(b.service, b.saver, { everyMs: 0, onError: (e) => errors.push(e) });
    expect(await recovery.scan()).toEqual([plan_id]);
    expect(errors.length).toBe(1);
    expect(String(errors[0])).toContain('"bad--w"');
    expect(await recovery.scan()).toEqual([]);
    expect(errors.length).toBe(1);
    await b.service.halt();
    b.handle.close();
    a.handle.close();
  });
});

describe("a keyed create cut between its claim and its first checkpoint", () => {
  it("is started by a plan_create with the same key and request once no live process holds it; plan_status says so", async () => {
    const db = join(dir, "plans.sqlite");
    const pay = scriptedTool("pay", [{ paid: 1 }, { paid: 1 }]);
    const manager = createPlanManager({ tools: [pay], planner: staticPlanner({ plan: payDraft }) });
    // A server whose run takes its thread, writes its row and dies before its first checkpoint.
    const a = serverOn(db, (saver) => {
      const real = manager.compile({ checkpointer: saver }) as unknown as ServedGraph;
      return {
        [CALLS_HELD]: true,
        getState: (c: LangGraphRunnableConfig) => real.getState(c),
        updateState: real.updateState.bind(real),
        invoke: async (_input: unknown, config: LangGraphRunnableConfig) => {
          await (config.configurable![RUN_CONTROL] as RunControl).held!();
          return new Promise(() => undefined);
        },
      } as unknown as ServedGraph;
    });
    const input = { goal: "pay", idempotency_key: "order-1" };
    const made = await a.service.create(input);
    const b = serverOn(db, (saver) => manager.compile({ checkpointer: saver }) as unknown as ServedGraph);
    expect(await new RunRecovery(b.service, b.saver, { everyMs: 0 }).scan()).toEqual([]);
    const status = await b.service.status(made.plan_id);
    expect(status.server).toEqual({ live: false });
    expect(status.message).toBe(
      `plan "${made.plan_id}" was never started: the process that created it ended before its first checkpoint, ` +
        "and no server takes it up; call plan_create again with the same idempotency_key and request to start it " +
        "(a plan made without a key: plan_delete it and create it again)",
    );
    // Another request under the same key is still refused.
    await expect(b.service.create({ goal: "pay twice", idempotency_key: "order-1" })).rejects.toMatchObject({
      code: "idempotency_conflict",
    });
    const again = await b.service.create(input);
    expect(again).toMatchObject({ plan_id: made.plan_id, status: "running", created: true });
    const waited = await b.service.wait(made.plan_id, 10);
    expect(waited.status).toBe("completed");
    expect(pay.calls.length).toBe(1);
    expect(await b.service.create(input)).toMatchObject({ plan_id: made.plan_id, status: "completed", created: false });
    b.handle.close();
    a.handle.close();
  });
});

describe("a run that threw in this server", () => {
  it("is not taken up again, and its status says plan_resume, not a take-up", async () => {
    const db = join(dir, "plans.sqlite");
    const pay = scriptedTool("pay", [() => new Promise(() => undefined)]);
    const manager = createPlanManager({ tools: [pay], planner: staticPlanner({ plan: payDraft }) });
    const a = serverOn(db, (saver) => manager.compile({ checkpointer: saver }) as unknown as ServedGraph);
    const { plan_id } = await a.service.create({ goal: "pay" });
    while (pay.calls.length === 0) await tick();
    a.handle.prepare("DELETE FROM langgraph_replan_thread_claims").run();
    // A server whose runs throw as they start (a saver that cannot write, say).
    const b = serverOn(db, (saver) => {
      const real = manager.compile({ checkpointer: saver }) as unknown as ServedGraph;
      return {
        getState: (c: LangGraphRunnableConfig) => real.getState(c),
        updateState: real.updateState.bind(real),
        invoke: () => Promise.reject(new Error("disk full")),
      } as unknown as ServedGraph;
    });
    const recovery = new RunRecovery(b.service, b.saver, { everyMs: 0 });
    expect(await recovery.scan()).toEqual([plan_id]);
    await b.service.settled();
    expect(await recovery.scan()).toEqual([]);
    const status = await b.service.status(plan_id);
    expect(status.server).toEqual({ live: false });
    expect(status.error?.message).toBe("disk full");
    expect(status.message).toBe(
      `plan "${plan_id}": its run threw in this server (see error) and is not taken up again; call plan_resume to retry it`,
    );
    b.handle.close();
    a.handle.close();
  });
});

describe("a server told to stop as it takes runs up (takeUpRuns' signal)", () => {
  it("a signal that came before or during the first look halts it: no run is carried on past it", async () => {
    const db = join(dir, "plans.sqlite");
    const pay = scriptedTool("pay", [() => new Promise(() => undefined), { paid: 2 }]);
    const manager = createPlanManager({ tools: [pay], planner: staticPlanner({ plan: payDraft }) });
    const graphOf = (saver: SqliteSaver) => manager.compile({ checkpointer: saver }) as unknown as ServedGraph;
    const a = serverOn(db, graphOf);
    const { plan_id } = await a.service.create({ goal: "pay" });
    while (pay.calls.length === 0) await tick();
    a.handle.prepare("DELETE FROM langgraph_replan_thread_claims").run();
    const b = serverOn(db, graphOf);
    const signalled = new AbortController();
    signalled.abort();
    const runs = await takeUpRuns(b.service, b.saver, { signal: signalled.signal });
    await runs.ended();
    expect(pay.calls.length).toBe(1);
    expect((await b.service.status(plan_id)).server).toEqual({ live: false });
    b.handle.close();
    a.handle.close();
  });
});

describe("what background runs threw (BackgroundRuns)", () => {
  it("is kept for at most MAX_FAILURES plans, the oldest dropped first, and dropped when the plan is deleted", async () => {
    const runs = new BackgroundRuns();
    const fail = (id: string) =>
      runs.start(id, undefined, () => Promise.reject(new Error(`threw ${id}`))).catch(() => undefined);
    for (let i = 0; i <= MAX_FAILURES; i++) await fail(`p${i}`);
    await runs.settled();
    expect(runs.failure("p0")).toBeUndefined();
    expect(runs.failure("p1")).toEqual({ message: "threw p1" });
    expect(runs.failure(`p${MAX_FAILURES}`)).toEqual({ message: `threw p${MAX_FAILURES}` });
    runs.forget("p1");
    expect(runs.failure("p1")).toBeUndefined();
  });
});
