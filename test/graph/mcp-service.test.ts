/**
 * The plan manager served over MCP to a real client (`@modelcontextprotocol/sdk`, in-memory
 * transport): create, wait (woken by the run), status from one checkpoint, answer, stop, resume,
 * list, report, delete — and errors as `isError` results that write nothing.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { PlanService } from "../../src/mcp/index.js";
import { scriptedTool } from "../helpers/graph.js";
import { connectInMemory, weatherDraft, tempSqlite } from "../helpers/mcp.js";

const draft = weatherDraft;

let dir: string;
let db: Database.Database;
let saver: SqliteSaver;
let drop: () => void;

beforeEach(() => void ({ dir, db, saver, drop } = tempSqlite("mcp-")));
afterEach(() => drop());

function served(
  options: { gate?: Promise<void>; reached?: () => void; reviewPlan?: boolean; now?: () => number } = {},
) {
  const forecast = scriptedTool("forecast", [
    async () => {
      options.reached?.();
      await options.gate;
      return { forecast: "sunny" };
    },
  ]);
  const planDay = scriptedTool("planDay", [{ day: "picnic" }]);
  const graph = createPlanManager({
    tools: [forecast, planDay],
    planner: staticPlanner({ plan: draft }),
    ...(options.reviewPlan ? { reviewPlan: true } : {}),
  }).compile({ checkpointer: saver });
  const service = new PlanService({
    graphs: { weather: graph },
    saver,
    server: { name: "langgraph-replan", version: "test" },
    ...(options.now ? { now: options.now } : {}),
  });
  return { service, forecast, planDay, graph };
}

const connect = connectInMemory;

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("the plan service over MCP", () => {
  it("lists its tools, each with input and output schemas", async () => {
    const { service } = served();
    const { client, close } = await connect(service);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "plan_answer",
      "plan_archive",
      "plan_create",
      "plan_delete",
      "plan_list",
      "plan_next",
      "plan_report",
      "plan_resume",
      "plan_status",
      "plan_stop",
      "plan_submit",
      "plan_wait",
    ]);
    expect(tools.every((t) => t.inputSchema.type === "object" && t.outputSchema?.type === "object")).toBe(true);
    await close();
  });

  it("creates a plan that runs in the background; plan_wait is woken when it ends", async () => {
    const gate = deferred();
    const { service, forecast, planDay } = served({ gate: gate.promise });
    const { call, close } = await connect(service);
    const created = await call("plan_create", { goal: "a day out", idempotency_key: "day-1" });
    expect(created.isError).toBeUndefined();
    const planId = created.structuredContent.plan_id as string;
    expect(planId).toMatch(/^[0-9a-f]{24}--weather$/);
    expect(created.structuredContent).toMatchObject({ status: "running", created: true });
    expect(created.structuredContent.server).toEqual({
      name: "langgraph-replan",
      version: "test",
      graphs: ["weather"],
    });

    const waiting = call("plan_wait", { plan_id: planId, timeout_s: 300 });
    const running = await call("plan_status", { plan_id: planId });
    expect(running.structuredContent.status).toBe("running");
    gate.resolve();
    const ended = await waiting;
    expect(ended.structuredContent).toMatchObject({
      plan_id: planId,
      graph: "weather",
      goal: "a day out",
      status: "completed",
      timed_out: false,
      plan_version: 1,
      progress: { done: 2, total: 2 },
    });
    expect(ended.structuredContent.steps).toEqual([
      { id: "fetch", goal: "fetch the forecast", status: "succeeded", attempts: 1, facts: { forecast: "trusted" } },
      { id: "plan", goal: "plan the day", status: "succeeded", attempts: 1, facts: { day: "trusted" } },
    ]);
    expect(ended.structuredContent.error).toBeUndefined();
    expect(forecast.calls).toHaveLength(1);
    expect(planDay.calls).toEqual([{ forecast: "sunny" }]);

    // The same key returns the same plan; nothing runs again.
    const again = await call("plan_create", { goal: "a day out", idempotency_key: "day-1" });
    expect(again.structuredContent).toMatchObject({ plan_id: planId, status: "completed", created: false });
    expect(forecast.calls).toHaveLength(1);
    await close();
  });

  it("two creates with the same key at once make one plan, run once", async () => {
    const gate = deferred();
    const { service, forecast } = served({ gate: gate.promise });
    const { call, close } = await connect(service);
    const [a, b] = await Promise.all([
      call("plan_create", { goal: "once", idempotency_key: "same" }),
      call("plan_create", { goal: "once", idempotency_key: "same" }),
    ]);
    expect(a.structuredContent.plan_id).toBe(b.structuredContent.plan_id);
    expect([a.structuredContent.created, b.structuredContent.created].sort()).toEqual([false, true]);
    gate.resolve();
    const done = await call("plan_wait", { plan_id: a.structuredContent.plan_id, timeout_s: 300 });
    expect(done.structuredContent.status).toBe("completed");
    expect(done.structuredContent.error).toBeUndefined();
    expect(forecast.calls).toHaveLength(1);
    await close();
  });

  it("a question is answered through plan_answer; a wrong answer is an isError result that writes nothing", async () => {
    const { service, forecast } = served({ reviewPlan: true });
    const { call, close } = await connect(service);
    const planId = (await call("plan_create", { goal: "a reviewed day" })).structuredContent.plan_id;
    const paused = await call("plan_wait", { plan_id: planId, timeout_s: 300 });
    expect(paused.structuredContent.status).toBe("awaiting_review");
    expect(paused.structuredContent.question.kind).toBe("plan_review");
    const checkpoints = db.prepare("SELECT count(*) AS n FROM checkpoints").get() as { n: number };

    const wrong = await call("plan_answer", { plan_id: planId, answer: { action: "provide", outputs: {} } });
    expect(wrong.isError).toBe(true);
    expect(JSON.parse(wrong.content[0]!.text)).toMatchObject({ error: "invalid_resume" });
    expect(db.prepare("SELECT count(*) AS n FROM checkpoints").get()).toEqual(checkpoints);
    expect(forecast.calls).toHaveLength(0);

    const ok = await call("plan_answer", { plan_id: planId, answer: { action: "approve" } });
    expect(ok.structuredContent).toEqual({ plan_id: planId, status: "running" });
    const ended = await call("plan_wait", { plan_id: planId, timeout_s: 300 });
    expect(ended.structuredContent.status).toBe("completed");
    expect(forecast.calls).toHaveLength(1);
    await close();
  });

  it("runs a plan the agent gives instead of asking the graph's planner", async () => {
    const { service, forecast, planDay } = served();
    const { call, close } = await connect(service);
    const plan = {
      steps: [{ id: "only", goal: "plan without a forecast", tool: "planDay", args: { forecast: "rain" } }],
    };
    const planId = (await call("plan_create", { goal: "a rainy day", plan })).structuredContent.plan_id;
    const done = await call("plan_wait", { plan_id: planId, timeout_s: 300 });
    expect(done.structuredContent.steps.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
      ["only", "succeeded"],
    ]);
    expect(forecast.calls).toEqual([]);
    expect(planDay.calls).toEqual([{ forecast: "rain" }]);
    await close();
  });

  it("errors name their code: an unknown plan, an unknown graph, a bad goal, a wait past 300 s", async () => {
    const { service } = served();
    const { call, close } = await connect(service);
    const error = async (name: string, args: Record<string, unknown>) => {
      const result = await call(name, args);
      expect(result.isError).toBe(true);
      return JSON.parse(result.content[0]!.text) as { error: string; message: string };
    };
    expect(await error("plan_status", { plan_id: "nope--weather" })).toMatchObject({
      error: "invalid_input",
      message: 'no plan "nope--weather" (plan ids come from plan_create or plan_list)',
    });
    expect(await error("plan_status", { plan_id: "x--__proto__" })).toMatchObject({ error: "invalid_input" });
    expect(await error("plan_create", { goal: "g", graph: "other" })).toMatchObject({
      error: "invalid_input",
      message: 'no graph "other" (served: weather)',
    });
    expect(await error("plan_create", { goal: "   " })).toMatchObject({ error: "invalid_input" });
    expect(await error("plan_create", { goal: "g", context: { "not a key": 1 } })).toMatchObject({
      error: "invalid_input",
    });
    expect(await error("plan_create", { goal: "g", plan: { steps: [{ id: "a" }] } })).toMatchObject({
      error: "invalid_input",
      message: "input: plan.steps.0.goal: Invalid input: expected string, received undefined",
    });
    // Through the library (no JSON in between): a BigInt is a typed error too, not a crash.
    await expect(service.create({ goal: "g", context: { n: 1n } })).rejects.toMatchObject({ code: "invalid_input" });
    expect(db.prepare("SELECT count(*) AS n FROM checkpoints").get()).toEqual({ n: 0 });
    // The schema refuses a wait over 300 s before the service sees it.
    const long = await call("plan_wait", { plan_id: "nope--weather", timeout_s: 301 });
    expect(long.isError).toBe(true);
    await close();
  });

  it("plan_status and plan_wait read the plan's latest checkpoint only, never its history", async () => {
    const { service } = served();
    const { call, close } = await connect(service);
    const planId = (await call("plan_create", { goal: "read once" })).structuredContent.plan_id;
    await call("plan_wait", { plan_id: planId, timeout_s: 300 });
    const getTuple = vi.spyOn(SqliteSaver.prototype, "getTuple");
    const list = vi.spyOn(SqliteSaver.prototype, "list");
    try {
      const status = await call("plan_status", { plan_id: planId });
      expect(status.structuredContent).toMatchObject({ status: "completed", progress: { done: 2, total: 2 } });
      expect([getTuple.mock.calls.length, list.mock.calls.length]).toEqual([1, 0]);
      // A wait on an ended plan: the existence check and the status, one checkpoint each.
      expect((await call("plan_wait", { plan_id: planId, timeout_s: 300 })).structuredContent.status).toBe("completed");
      expect([getTuple.mock.calls.length, list.mock.calls.length]).toEqual([3, 0]);
    } finally {
      getTuple.mockRestore();
      list.mockRestore();
    }
    await close();
  });

  it("an oversized context or plan argument is an isError result naming the value; nothing is written", async () => {
    const { service, forecast } = served();
    const { call, close } = await connect(service);
    const big = "x".repeat(70_000);
    const context = await call("plan_create", { goal: "too much", context: { notes: big } });
    expect(context.isError).toBe(true);
    expect(JSON.parse(context.content[0]!.text)).toEqual({
      error: "invalid_input",
      message: "input: context.notes is 70002 bytes of JSON, over the 64000-byte fact limit",
      path: "context.notes",
    });
    const plan = { steps: [{ id: "only", goal: "plan", tool: "planDay", args: { forecast: big } }] };
    const args = await call("plan_create", { goal: "too much", plan });
    expect(JSON.parse(args.content[0]!.text)).toMatchObject({ error: "invalid_input", path: "plan.steps.0.args" });
    await service.settled();
    expect((await call("plan_list", {})).structuredContent.plans).toEqual([]);
    expect(db.prepare("SELECT count(*) AS n FROM checkpoints").get()).toEqual({ n: 0 });
    expect(forecast.calls).toEqual([]);
    await close();
  });

  it("plan_delete and plan_answer refuse a plan whose run is going on with thread_busy, and change nothing", async () => {
    const gate = deferred();
    const { service } = served({ gate: gate.promise });
    const { call, close } = await connect(service);
    const planId = (await call("plan_create", { goal: "busy" })).structuredContent.plan_id;
    for (const [name, args] of [
      ["plan_delete", { plan_id: planId }],
      ["plan_answer", { plan_id: planId, answer: { action: "approve" } }],
    ] as const) {
      const refused = await call(name, args);
      expect(refused.isError).toBe(true);
      expect(JSON.parse(refused.content[0]!.text)).toEqual({
        error: "thread_busy",
        message: `plan "${planId}" is running: wait for it (plan_wait) or stop it (plan_stop)`,
      });
    }
    gate.resolve();
    expect((await call("plan_wait", { plan_id: planId, timeout_s: 300 })).structuredContent.status).toBe("completed");
    await close();
  });

  it("two services on one SQLite file: a wait on a plan the other drives returns at once with the file's status", async () => {
    const gate = deferred();
    const reached = deferred();
    const { service: a } = served({ gate: gate.promise, reached: reached.resolve });
    const other = new Database(join(dir, "plans.sqlite"));
    const otherSaver = new SqliteSaver(other);
    const graph = createPlanManager({
      tools: [scriptedTool("forecast", [{ forecast: "sunny" }]), scriptedTool("planDay", [{ day: "picnic" }])],
      planner: staticPlanner({ plan: draft }),
    }).compile({ checkpointer: otherSaver });
    const b = new PlanService({ graphs: { weather: graph }, saver: otherSaver });
    try {
      const { plan_id } = await a.create({ goal: "driven by a" });
      await reached.promise;
      // Nothing carries a wake between processes on SQLite: B answers from the file, at once.
      expect(await b.wait(plan_id, 300)).toMatchObject({ status: "running", timed_out: false });
      await expect(b.delete(plan_id)).rejects.toMatchObject({ code: "thread_busy" });
      gate.resolve();
      expect((await a.wait(plan_id, 300)).status).toBe("completed");
      expect((await b.wait(plan_id, 300)).status).toBe("completed");
    } finally {
      other.close();
    }
  });

  it("stop, then resume carries the plan on from the same step; list pages newest first; delete removes it", async () => {
    const gate = deferred();
    let now = Date.parse("2026-11-25T12:00:00Z");
    const { service, forecast, planDay } = served({ gate: gate.promise, now: () => now });
    const { call, close } = await connect(service);
    const first = (await call("plan_create", { goal: "first" })).structuredContent.plan_id;
    const stopping = call("plan_stop", { plan_id: first, reason: "operator" });
    gate.resolve();
    const stopped = await stopping;
    expect(stopped.structuredContent.status).toBe("stopped");
    expect(stopped.structuredContent.error).toMatchObject({ failure_reason: "stopped", recoverable: true });
    const resumed = await call("plan_resume", { plan_id: first });
    expect(resumed.structuredContent).toEqual({ plan_id: first, status: "running" });
    const done = await call("plan_wait", { plan_id: first, timeout_s: 300 });
    expect(done.structuredContent.status).toBe("completed");
    // The stop was taken at the first boundary: each step ran once, across the stop and the resume.
    expect(forecast.calls).toHaveLength(1);
    expect(planDay.calls).toHaveLength(1);

    now += 1_000;
    const second = (await call("plan_create", { goal: "second" })).structuredContent.plan_id;
    await call("plan_wait", { plan_id: second, timeout_s: 300 });
    // Within the dedupe window the same goal returns the same plan.
    expect((await call("plan_create", { goal: "second" })).structuredContent.plan_id).toBe(second);

    const page1 = await call("plan_list", { limit: 1 });
    expect(page1.structuredContent.plans.map((p: { plan_id: string }) => p.plan_id)).toEqual([second]);
    const page2 = await call("plan_list", { limit: 1, cursor: page1.structuredContent.next_cursor });
    expect(page2.structuredContent.plans.map((p: { plan_id: string }) => p.plan_id)).toEqual([first]);
    const onlyFailed = await call("plan_list", { status: ["failed"] });
    expect(onlyFailed.structuredContent.plans).toEqual([]);

    // An archived plan leaves the list unless asked, and comes back when unarchived.
    expect((await call("plan_archive", { plan_id: second })).structuredContent).toEqual({
      plan_id: second,
      archived: true,
    });
    const listed = async (args: Record<string, unknown>) =>
      (await call("plan_list", args)).structuredContent.plans.map((p: { plan_id: string }) => p.plan_id);
    expect(await listed({})).toEqual([first]);
    expect(await listed({ archived: "only" })).toEqual([second]);
    expect(await listed({ archived: "include" })).toEqual([second, first]);
    await call("plan_archive", { plan_id: second, archived: false });
    expect(await listed({})).toEqual([second, first]);
    const badCursor = await call("plan_list", { cursor: "nope" });
    expect(JSON.parse(badCursor.content[0]!.text)).toMatchObject({ error: "invalid_input", path: "cursor" });

    const report = await call("plan_report", { plan_id: first, format: "markdown" });
    expect(report.structuredContent.report).toContain("# first\n\nStatus: **completed**");

    const forecastCalls = forecast.calls.length;
    const deleted = await call("plan_delete", { plan_id: first });
    expect(deleted.structuredContent).toEqual({ plan_id: first, deleted: true });
    expect((await call("plan_status", { plan_id: first })).isError).toBe(true);
    expect(forecast.calls.length).toBe(forecastCalls);
    await close();
  });
});

describe("external steps over MCP: plan_next and plan_submit", () => {
  const instructions = "Book the table on the restaurant's site for the picnic's backup plan; answer with the booking";
  const externalDraft: PlanDraft = {
    steps: [
      { id: "fetch", goal: "fetch the forecast", tool: "forecast", produces: ["forecast"] },
      {
        id: "book",
        goal: "book a table",
        external: { instructions },
        dependsOn: ["fetch"],
        inputs: ["forecast"],
        produces: ["booking"],
        successSignal: 'output.booking != ""',
        sideEffects: ["books a table"],
        idempotent: false,
        retry: { maxAttempts: 3, backoff: "none" },
      },
    ],
  };

  function servedExternal() {
    const forecast = scriptedTool("forecast", [{ forecast: "rain" }]);
    const graph = createPlanManager({ tools: [forecast], planner: staticPlanner({ plan: externalDraft }) }).compile({
      checkpointer: saver,
    });
    return new PlanService({ graphs: { dinner: graph }, saver, server: { name: "langgraph-replan", version: "test" } });
  }

  it("plan_next returns the external step with its question; plan_submit's output completes the plan", async () => {
    const { call, close } = await connect(servedExternal());
    const planId = (await call("plan_create", { goal: "dinner" })).structuredContent.plan_id as string;
    const paused = await call("plan_wait", { plan_id: planId, timeout_s: 300 });
    expect(paused.structuredContent.question.kind).toBe("external_step");
    const next = await call("plan_next", { plan_id: planId });
    expect(next.isError).toBeUndefined();
    const [step] = next.structuredContent.steps;
    expect(next.structuredContent).toMatchObject({ plan_id: planId, status: "awaiting_human" });
    expect(next.structuredContent.steps).toHaveLength(1);
    expect(step).toEqual({
      kind: "external_step",
      reason: instructions,
      stepId: "book",
      planVersion: 1,
      options: ["submit", "skip", "abort"],
      context: {
        goal: "dinner",
        step: { id: "book", goal: "book a table", instructions },
        inputs: { forecast: "rain" },
        produces: ["booking"],
        successSignal: 'output.booking != ""',
        attempt: 1,
        idempotencyKey: step.context.idempotencyKey,
        sideEffects: ["books a table"],
      },
    });
    expect(step.context.idempotencyKey).toMatch(new RegExp(`^${planId}:[0-9a-f]{16}$`));

    // A transient error: offered again, under the same key, as attempt 2.
    const failed = await call("plan_submit", {
      plan_id: planId,
      step_id: "book",
      error: { message: "the booking site is down", class: "transient" },
    });
    expect(failed.structuredContent).toEqual({ plan_id: planId, status: "running" });
    await call("plan_wait", { plan_id: planId, timeout_s: 300 });
    const again = (await call("plan_next", { plan_id: planId })).structuredContent.steps[0];
    expect(again.context).toMatchObject({
      attempt: 2,
      previousError: "the booking site is down",
      idempotencyKey: step.context.idempotencyKey,
    });

    const done = await call("plan_submit", { plan_id: planId, step_id: "book", output: { booking: "T-12" } });
    expect(done.structuredContent).toEqual({ plan_id: planId, status: "running" });
    const ended = await call("plan_wait", { plan_id: planId, timeout_s: 300 });
    expect(ended.structuredContent.status).toBe("completed");
    expect(ended.structuredContent.steps).toEqual([
      { id: "fetch", goal: "fetch the forecast", status: "succeeded", attempts: 1, facts: { forecast: "trusted" } },
      { id: "book", goal: "book a table", status: "succeeded", attempts: 2, facts: { booking: "trusted" } },
    ]);
    expect((await call("plan_next", { plan_id: planId })).structuredContent).toEqual({
      plan_id: planId,
      status: "completed",
      steps: [],
    });
    await close();
  });

  it("a submission that cannot answer is an isError result with invalid_resume, and writes nothing", async () => {
    const { call, close } = await connect(servedExternal());
    const planId = (await call("plan_create", { goal: "dinner" })).structuredContent.plan_id as string;
    await call("plan_wait", { plan_id: planId, timeout_s: 300 });
    const checkpoints = db.prepare("SELECT count(*) AS n FROM checkpoints").get();
    const error = async (args: Record<string, unknown>) => {
      const result = await call("plan_submit", { plan_id: planId, ...args });
      expect(result.isError).toBe(true);
      return JSON.parse(result.content[0]!.text) as { error: string; message: string };
    };
    expect(await error({ step_id: "fetch", output: { booking: "T-1" } })).toEqual({
      error: "invalid_resume",
      message: `plan "${planId}", external_step: submit names step "fetch", but the step waiting for the calling agent is "book"`,
      path: "answer",
    });
    expect(await error({ step_id: "book", output: { booking: "x".repeat(10 * 1024 * 1024) } })).toMatchObject({
      error: "invalid_resume",
    });
    expect(await error({ step_id: "book" })).toMatchObject({ error: "invalid_resume" });
    expect(db.prepare("SELECT count(*) AS n FROM checkpoints").get()).toEqual(checkpoints);
    expect((await call("plan_next", { plan_id: planId })).structuredContent.steps[0].context.attempt).toBe(1);
    await close();
  });
});
