/**
 * The planning service on PostgreSQL, as two servers on one database see it (each with its own
 * saver pool and its own LISTEN connection, as two processes would have): `plan_wait` on one is
 * woken by a run the other drives, for an end and for a question; a plan the other runs refuses
 * deletion with `thread_busy`; archive, list and delete go through the database. Then the same
 * across two `langgraph-replan mcp --db postgresql://…` processes over stdio.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { PlanService, type ServedGraph } from "../../src/mcp/index.js";
import { graph as shop } from "../fixtures/mcp/effects-graph.js";
import { openPlanWakes } from "../../src/worker/index.js";
import { startPostgres, type PgServer } from "../../test-reliability/helpers/postgres.js";
import { scriptedTool } from "../helpers/graph.js";
import { startStdio, until, weatherDraft } from "../helpers/mcp.js";

let pg: PgServer;
const closers: (() => Promise<void> | void)[] = [];
beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  pg?.stop();
});

const draft = weatherDraft;

/** The same, with a person's confirmation between the forecast and the day: a question after the first step. */
const confirmed: PlanDraft = {
  steps: [
    draft.steps[0]!,
    { id: "confirm", goal: "confirm the day out", human: { prompt: "Go?" }, dependsOn: ["fetch"], produces: ["by"] },
    { ...draft.steps[1]!, dependsOn: ["confirm"] },
  ],
};

function deferred() {
  let settle!: () => void;
  const promise = new Promise<void>((r) => (settle = r));
  return { promise, resolve: () => settle() };
}

/** What the two servers share: each tool's gate, and a signal that a call has reached it. */
interface Gate {
  open: ReturnType<typeof deferred>;
  reached: ReturnType<typeof deferred>;
  dayOpen: ReturnType<typeof deferred>;
  dayReached: ReturnType<typeof deferred>;
}

let schemas = 0;

/** One server: its own pool on the shared schema, its own wakes, the same graph as the other's. */
async function server(schema: string, gate: Gate, plan: PlanDraft) {
  const saver = PostgresSaver.fromConnString(pg.url, { schema });
  await saver.setup();
  const wakes = await openPlanWakes(pg.url);
  closers.push(
    () => saver.end(),
    () => wakes.close(),
  );
  const forecast = scriptedTool("forecast", [
    async () => {
      gate.reached.resolve();
      await gate.open.promise;
      return { forecast: "sunny" };
    },
  ]);
  const planDay = scriptedTool("planDay", [
    async () => {
      gate.dayReached.resolve();
      await gate.dayOpen.promise;
      return { day: "picnic" };
    },
  ]);
  const graph = createPlanManager({
    tools: [forecast, planDay],
    planner: staticPlanner({ plan }),
  }).compile({ checkpointer: saver });
  const service = new PlanService({ graphs: { weather: graph }, saver, wakes });
  closers.push(() => service.close());
  return { service, forecast, planDay };
}

async function pair(plan: PlanDraft = draft) {
  const schema = `mcp${(schemas += 1)}`;
  const gate = { open: deferred(), reached: deferred(), dayOpen: deferred(), dayReached: deferred() };
  if (plan === draft) gate.dayOpen.resolve();
  const a = await server(schema, gate, plan);
  const b = await server(schema, gate, plan);
  return { a, b, gate };
}

describe("the plan service on PostgreSQL, two servers on one database", () => {
  it("plan_wait on one server is woken when a run the other drives ends (LISTEN/NOTIFY), not at once", async () => {
    const { a, b, gate } = await pair();
    const { plan_id } = await a.service.create({ goal: "a day out" });
    await gate.reached.promise;
    // B does not drive the run: with nothing to wake it, this wait would return "running" at once.
    const timedOut = await b.service.wait(plan_id, 0.2);
    expect(timedOut).toMatchObject({ status: "running", timed_out: true });
    const waiting = b.service.wait(plan_id, 300);
    gate.open.resolve();
    expect(await waiting).toMatchObject({
      plan_id,
      status: "completed",
      timed_out: false,
      progress: { done: 2, total: 2 },
    });
    expect(a.forecast.calls).toHaveLength(1);
    expect(b.forecast.calls).toHaveLength(0);
  }, 60_000);

  it("a question on one server wakes a wait on the other; the answer given there carries the plan on there", async () => {
    const { a, b, gate } = await pair(confirmed);
    const { plan_id } = await a.service.create({ goal: "a confirmed day" });
    await gate.reached.promise;
    const waiting = b.service.wait(plan_id, 300);
    gate.open.resolve();
    const paused = await waiting;
    expect(paused).toMatchObject({ status: "awaiting_human", timed_out: false, progress: { done: 1, total: 3 } });
    expect(paused.question?.kind).toBe("human_step");
    const answer = { action: "complete", output: { by: "ana" } };
    expect(await b.service.answer(plan_id, answer)).toEqual({ plan_id, status: "running" });
    await gate.dayReached.promise;
    const ending = a.service.wait(plan_id, 300);
    gate.dayOpen.resolve();
    expect(await ending).toMatchObject({ status: "completed", timed_out: false, progress: { done: 3, total: 3 } });
    expect([a.forecast.calls.length, b.forecast.calls.length]).toEqual([1, 0]);
    expect([a.planDay.calls.length, b.planDay.calls.length]).toEqual([0, 1]);
  }, 60_000);

  it("a plan the other server runs refuses deletion with thread_busy; archived, it leaves plan_list; deleted, it is gone", async () => {
    const { a, b, gate } = await pair();
    const { plan_id } = await a.service.create({ goal: "kept" });
    await gate.reached.promise;
    await expect(b.service.delete(plan_id)).rejects.toMatchObject({ code: "thread_busy" });
    gate.open.resolve();
    expect((await a.service.wait(plan_id, 300)).status).toBe("completed");
    await b.service.archive(plan_id);
    expect((await a.service.list()).plans).toEqual([]);
    expect((await a.service.list({ archived: "include" })).plans.map((p) => [p.plan_id, p.archived])).toEqual([
      [plan_id, true],
    ]);
    expect(await b.service.delete(plan_id)).toEqual({ plan_id, deleted: true });
    await expect(a.service.status(plan_id)).rejects.toMatchObject({ code: "invalid_input", path: "plan_id" });
    expect((await a.service.list({ archived: "include" })).plans).toEqual([]);
  }, 60_000);
});

describe("langgraph-replan mcp --db postgresql://", () => {
  it("plan_wait on one server process returns when the run another server process drives has ended", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcp-pg-"));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const gate = join(dir, "gate");
    const start = async () => {
      const { client, call } = await startStdio({
        db: pg.url,
        config: "test/fixtures/mcp/langgraph.json",
        env: { LANGGRAPH_CLI_NO_ANALYTICS: "1", MCP_TEST_GATE: gate },
        name: "pg-agent",
      });
      closers.push(() => client.close());
      return async (name: string, args: Record<string, unknown>) => (await call(name, args)).structuredContent;
    };
    const one = await start();
    const two = await start();
    const { plan_id } = await one("plan_create", { goal: "a day out across servers" });
    // The forecast has reached the gate (the plan is checkpointed) and waits for the gate file.
    await until(`${gate}.reached`);
    expect(await two("plan_wait", { plan_id, timeout_s: 0.3 })).toMatchObject({ timed_out: true });
    const waiting = two("plan_wait", { plan_id, timeout_s: 120 });
    writeFileSync(gate, "open");
    expect(await waiting).toMatchObject({ plan_id, status: "completed", timed_out: false });
  }, 120_000);
});

describe("langgraph-replan mcp --db postgresql://, a server closed mid-step", () => {
  it("the next server takes the run up at launch (the dead server's lock went with its connection) and settles the cut charge: one charge", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcp-pg-recovery-"));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const start = async () => {
      const { client, call, transport } = await startStdio({
        db: pg.url,
        config: "test/fixtures/mcp/effects.json",
        env: { MCP_TEST_DIR: dir },
        name: "pg-agent",
      });
      return {
        client,
        call: async (name: string, args: Record<string, unknown>) => (await call(name, args)).structuredContent,
        pid: transport.pid!,
      };
    };
    const charges = () => readFileSync(join(dir, "charges"), "utf8").split("\n").filter(Boolean);
    const first = await start();
    const { plan_id } = await first.call("plan_create", { goal: "pay for order 18" });
    await until(join(dir, "charge.reached"));
    // The SDK's close: stdin, SIGTERM after 2 s, SIGKILL after 4 s; the charge never answers.
    await first.client.close();
    for (;;) {
      try {
        process.kill(first.pid, 0);
      } catch {
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(charges()).toHaveLength(1);
    // Before a server takes it up: no live server, and the charge in doubt as the journal has it.
    const saver = PostgresSaver.fromConnString(pg.url);
    try {
      const served = (shop as unknown as { builder: { compile(o: object): ServedGraph } }).builder.compile({
        checkpointer: saver,
      });
      const cut = await new PlanService({ graphs: { shop: served }, saver }).status(plan_id);
      expect(cut).toMatchObject({ status: "running", server: { live: false } });
      expect(cut.steps.map(({ id, status, attempts, in_doubt }) => ({ id, status, attempts, in_doubt }))).toEqual([
        { id: "pay", status: "running", attempts: 1, in_doubt: true },
        { id: "mail", status: "pending", attempts: 0, in_doubt: undefined },
      ]);
    } finally {
      await saver.end();
    }
    writeFileSync(join(dir, "gate"), "open");
    const second = await start();
    closers.push(() => second.client.close());
    const done = await second.call("plan_wait", { plan_id, timeout_s: 120 });
    expect(done).toMatchObject({ status: "completed", timed_out: false, progress: { done: 2, total: 2 } });
    expect(done.steps.map((s: { id: string; attempts: number }) => [s.id, s.attempts])).toEqual([
      ["pay", 1],
      ["mail", 1],
    ]);
    expect(charges()).toHaveLength(1);
    const { report } = await second.call("plan_report", { plan_id, format: "json" });
    expect(report.metrics).toMatchObject({ effectsVerified: 1, effectsInDoubt: 0, effectsHappened: 0, decisions: 1 });
  }, 120_000);
});
