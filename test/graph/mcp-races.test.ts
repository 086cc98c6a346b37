/**
 * The plan service under races: two servers on one PostgreSQL database (in-process pairs, each with
 * its own pool and LISTEN connection, and two `langgraph-replan mcp --db postgresql://…` processes
 * over stdio) see a plan the other has just created, and never answer a wait with a question the
 * other has just answered; `plan_delete` racing `plan_answer` refuses one of them and never leaves
 * an empty plan behind (SQLite and PostgreSQL); an idempotency key names one request; concurrent
 * creates of one request start one plan; `new_run` starts again after a plan that did not succeed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPlanManager, staticPlanner, type PlanDraft, type PlanManagerError } from "../../src/index.js";
import { PlanService } from "../../src/mcp/index.js";
import { openPlanWakes } from "../../src/worker/index.js";
import { startPostgres, type PgServer } from "../../test-reliability/helpers/postgres.js";
import { scriptedTool } from "../helpers/graph.js";
import { connectInMemory, startStdio } from "../helpers/mcp.js";

let pg: PgServer;
let dir: string;
const closers: (() => Promise<void> | void)[] = [];
beforeAll(async () => {
  pg = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "mcp-races-"));
}, 120_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  pg?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** A forecast, a person's confirmation (the question), then the day. */
const confirmed: PlanDraft = {
  steps: [
    { id: "fetch", goal: "fetch the forecast", tool: "forecast", produces: ["forecast"] },
    { id: "confirm", goal: "confirm the day out", human: { prompt: "Go?" }, dependsOn: ["fetch"], produces: ["by"] },
    {
      id: "plan",
      goal: "plan the day",
      tool: "planDay",
      dependsOn: ["confirm"],
      inputs: ["forecast"],
      produces: ["day"],
    },
  ],
};

function deferred() {
  let settle!: () => void;
  const promise = new Promise<void>((r) => (settle = r));
  return { promise, resolve: () => settle() };
}

/** A service on `saver` serving the confirmed plan; `day.gate` holds the last step until it opens (open at first). */
function serviceOn(saver: BaseCheckpointSaver, extra: Partial<ConstructorParameters<typeof PlanService>[0]> = {}) {
  const day = { gate: { promise: Promise.resolve(), resolve: () => undefined } as ReturnType<typeof deferred> };
  const forecast = scriptedTool("forecast", [{ forecast: "sunny" }]);
  const planDay = scriptedTool("planDay", [
    async () => {
      await day.gate.promise;
      return { day: "picnic" };
    },
  ]);
  const graph = createPlanManager({ tools: [forecast, planDay], planner: staticPlanner({ plan: confirmed }) }).compile({
    checkpointer: saver,
  });
  const service = new PlanService({ graphs: { weather: graph }, saver, ...extra });
  closers.push(() => service.close());
  return { service, forecast, planDay, day, graph };
}

let schemas = 0;

/** Two servers on one PostgreSQL schema, each with its own pool and its own LISTEN connection. */
async function pgPair() {
  const schema = `races${(schemas += 1)}`;
  const one = async () => {
    const saver = PostgresSaver.fromConnString(pg.url, { schema });
    await saver.setup();
    const wakes = await openPlanWakes(pg.url);
    closers.push(
      () => saver.end(),
      () => wakes.close(),
    );
    return serviceOn(saver, { wakes });
  };
  const a = await one();
  const b = await one();
  return { a, b };
}

/** Two services on one SQLite file (as two processes would open it). */
function sqlitePair() {
  const file = join(dir, `plans-${(schemas += 1)}.sqlite`);
  const one = () => {
    const db = new Database(file);
    closers.push(() => void db.close());
    return serviceOn(new SqliteSaver(db));
  };
  const a = one();
  const b = one();
  return { a, b };
}

const complete = { action: "complete", output: { by: "ana" } };

describe("two plan services on one PostgreSQL database", () => {
  it("plan_wait on one right after plan_create on the other waits for the plan instead of answering 'no plan'", async () => {
    const { a, b } = await pgPair();
    for (let round = 0; round < 5; round += 1) {
      const { plan_id } = await a.service.create({ goal: `a day out ${round}` });
      const paused = await b.service.wait(plan_id, 120);
      expect(paused).toMatchObject({ plan_id, status: "awaiting_human", timed_out: false });
      expect(paused.question).toMatchObject({ kind: "human_step", stepId: "confirm" });
    }
  }, 120_000);

  it("after plan_answer on one, plan_wait on the other waits for the run the answer started, never returns the answered question", async () => {
    const { a, b } = await pgPair();
    for (let round = 0; round < 5; round += 1) {
      b.day.gate = deferred();
      const { plan_id } = await a.service.create({ goal: `a confirmed day ${round}` });
      expect((await a.service.wait(plan_id, 120)).status).toBe("awaiting_human");
      expect(await b.service.answer(plan_id, complete)).toEqual({ plan_id, status: "running" });
      // B's run waits at the last step: A's wait must see a run going on, not the question answered.
      const during = await a.service.wait(plan_id, 0.3);
      expect(during).toMatchObject({ status: "running", timed_out: true });
      expect(during.question).toBeUndefined();
      expect((await a.service.status(plan_id)).status).toBe("running");
      // A second answer to the same question is refused: the run holds the plan (thread_busy), or has
      // already moved past the question (invalid_resume), depending on how far it got.
      const twice = await a.service.answer(plan_id, complete).catch((error: { code: string }) => error.code);
      expect(["thread_busy", "invalid_resume"]).toContain(twice);
      const ending = a.service.wait(plan_id, 120);
      b.day.gate.resolve();
      expect(await ending).toMatchObject({ status: "completed", timed_out: false, progress: { done: 3, total: 3 } });
    }
    expect(b.planDay.calls).toHaveLength(5);
    expect(a.planDay.calls).toHaveLength(0);
  }, 120_000);

  it("two creates with one key at once, one on each server: one plan, run once; another request is refused", async () => {
    const { a, b } = await pgPair();
    for (let round = 0; round < 4; round += 1) {
      const key = `pg-key-${round}`;
      const both = await Promise.allSettled([
        a.service.create({ goal: "one plan", idempotency_key: key }),
        b.service.create({ goal: "one plan", idempotency_key: key }),
      ]);
      const made = both.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
      expect(made.filter((c) => c.created)).toHaveLength(1);
      const planId = made.find((c) => c.created)!.plan_id;
      expect(made.every((c) => c.plan_id === planId)).toBe(true);
      // Between the first server's claim and its row, the second sees only the claim: it starts nothing.
      const refusals = both.flatMap((r) => (r.status === "rejected" ? [r.reason as PlanManagerError] : []));
      const busy = `plan "${planId}" (idempotency_key "${key}") is being started by another server: call plan_create again to get it`;
      expect(refusals.map((e) => [e.code, e.path, e.message])).toEqual(
        refusals.map(() => ["thread_busy", "idempotency_key", busy]),
      );
      expect((await a.service.wait(planId, 120)).status).toBe("awaiting_human");
      expect(await b.service.create({ goal: "one plan", idempotency_key: key })).toMatchObject({
        plan_id: planId,
        created: false,
      });
      await expect(b.service.create({ goal: "another plan", idempotency_key: key })).rejects.toMatchObject({
        code: "idempotency_conflict",
      });
    }
    expect(a.forecast.calls.length + b.forecast.calls.length).toBe(4);
  }, 120_000);

  it("plan_delete racing plan_answer: exactly one is refused, and the plan is never left empty", async () => {
    const { a, b } = await pgPair();
    for (let round = 0; round < 6; round += 1) {
      const goal = `deleted or answered ${round}`;
      const { plan_id } = await a.service.create({ goal });
      expect((await a.service.wait(plan_id, 120)).status).toBe("awaiting_human");
      // An answer that wins holds the plan until the race is over (its last step waits), so the
      // delete cannot simply come after it.
      a.day.gate = deferred();
      b.day.gate = deferred();
      const [answered, deleted] = await Promise.allSettled([
        (round % 2 === 0 ? a : b).service.answer(plan_id, complete),
        (round % 3 === 0 ? a : b).service.delete(plan_id),
      ]);
      a.day.gate.resolve();
      b.day.gate.resolve();
      await settledRace(goal, plan_id, answered, deleted, a.service, b.service);
    }
  }, 120_000);
});

/**
 * Checks one answer/delete race: exactly one call refused, with `thread_busy` or as an unknown plan;
 * a plan answered goes on to completion with its goal; a plan deleted is gone on both servers.
 */
async function settledRace(
  goal: string,
  planId: string,
  answered: PromiseSettledResult<unknown>,
  deleted: PromiseSettledResult<unknown>,
  a: PlanService,
  b: PlanService,
): Promise<void> {
  expect([answered.status, deleted.status].sort()).toEqual(["fulfilled", "rejected"]);
  const answerWon = answered.status === "fulfilled";
  const refused = ((answerWon ? deleted : answered) as PromiseRejectedResult).reason as PlanManagerError;
  // What each server sees once the runs have settled: the plan answered and run to its end, or no plan at all.
  await Promise.all([a.settled(), b.settled()]);
  const seen = await Promise.all(
    [a, b].map((service) =>
      service.status(planId).then(
        (w) => `${w.status}: ${w.goal} (${w.progress.done}/${w.progress.total})`,
        (error: PlanManagerError) => `${error.code} at ${error.path}`,
      ),
    ),
  );
  const listed = (await a.list({ archived: "include" })).plans.some((p) => p.plan_id === planId);
  expect({ seen, listed }).toEqual(
    answerWon
      ? { seen: [`completed: ${goal} (3/3)`, `completed: ${goal} (3/3)`], listed: true }
      : { seen: ["invalid_input at plan_id", "invalid_input at plan_id"], listed: false },
  );
  // An answer is refused while the delete holds the plan (thread_busy), or once it is gone (no plan).
  const refusal = `${answerWon ? "delete" : "answer"}: ${refused.code}${refused.code === "invalid_input" ? ` at ${refused.path}` : ""}`;
  expect(answerWon ? ["delete: thread_busy"] : ["answer: thread_busy", "answer: invalid_input at plan_id"]).toContain(
    refusal,
  );
}

describe("plan_delete racing plan_answer on SQLite", () => {
  it("in one service: exactly one is refused, and the plan is never left empty", async () => {
    const { a, b } = sqlitePair();
    for (let round = 0; round < 4; round += 1) {
      const goal = `deleted or answered ${round}`;
      const { plan_id } = await a.service.create({ goal });
      expect((await a.service.wait(plan_id, 120)).status).toBe("awaiting_human");
      // An answer that wins holds the plan until the race is over (its last step waits), so the
      // delete cannot simply come after it.
      a.day.gate = deferred();
      b.day.gate = deferred();
      const [answered, deleted] = await Promise.allSettled([
        a.service.answer(plan_id, complete),
        a.service.delete(plan_id),
      ]);
      a.day.gate.resolve();
      b.day.gate.resolve();
      await settledRace(goal, plan_id, answered, deleted, a.service, b.service);
    }
  });

  it("in two services on one file: exactly one is refused, and the plan is never left empty", async () => {
    const { a, b } = sqlitePair();
    for (let round = 0; round < 4; round += 1) {
      const goal = `deleted or answered ${round}`;
      const { plan_id } = await a.service.create({ goal });
      expect((await a.service.wait(plan_id, 120)).status).toBe("awaiting_human");
      // An answer that wins holds the plan until the race is over (its last step waits), so the
      // delete cannot simply come after it.
      a.day.gate = deferred();
      b.day.gate = deferred();
      const [answered, deleted] = await Promise.allSettled([
        (round % 2 === 0 ? a : b).service.answer(plan_id, complete),
        (round % 2 === 0 ? b : a).service.delete(plan_id),
      ]);
      a.day.gate.resolve();
      b.day.gate.resolve();
      await settledRace(goal, plan_id, answered, deleted, a.service, b.service);
    }
  });

  it("an answer to a plan deleted meanwhile is refused as an unknown plan; nothing comes back", async () => {
    const { a, b } = sqlitePair();
    const { plan_id } = await a.service.create({ goal: "deleted first" });
    expect((await a.service.wait(plan_id, 120)).status).toBe("awaiting_human");
    // B deletes the plan after A's answer was checked against the question (the service's read,
    // then the one resumeRun checks it with) and before A's run takes the plan.
    const graph = a.graph;
    const getState = graph.getState.bind(graph);
    let reads = 0;
    graph.getState = async (...args: Parameters<typeof getState>) => {
      const snapshot = await getState(...args);
      if ((reads += 1) === 2) await b.service.delete(plan_id);
      return snapshot;
    };
    try {
      await expect(a.service.answer(plan_id, complete)).rejects.toMatchObject({
        code: "invalid_input",
        path: "plan_id",
      });
    } finally {
      graph.getState = getState;
    }
    await a.service.settled();
    await expect(a.service.status(plan_id)).rejects.toMatchObject({ code: "invalid_input", path: "plan_id" });
    expect((await a.service.list({ archived: "include" })).plans).toEqual([]);
  });
});

describe("runs answer once they hold the plan", () => {
  it("plan_resume of a stopped plan answers while the plan's next step is in flight", async () => {
    const db = new Database(join(dir, `resume-${(schemas += 1)}.sqlite`));
    closers.push(() => void db.close());
    const saver = new SqliteSaver(db);
    const fetched = deferred();
    const planned = deferred();
    const reached = deferred();
    const forecast = scriptedTool("forecast", [
      async () => {
        await fetched.promise;
        return { forecast: "sunny" };
      },
    ]);
    const planDay = scriptedTool("planDay", [
      async () => {
        reached.resolve();
        await planned.promise;
        return { day: "picnic" };
      },
    ]);
    const twoSteps: PlanDraft = { steps: [confirmed.steps[0]!, { ...confirmed.steps[2]!, dependsOn: ["fetch"] }] };
    const graph = createPlanManager({ tools: [forecast, planDay], planner: staticPlanner({ plan: twoSteps }) }).compile(
      { checkpointer: saver },
    );
    const service = new PlanService({ graphs: { weather: graph }, saver });
    closers.push(() => service.close());
    const { plan_id } = await service.create({ goal: "stopped, then resumed" });
    const stopping = service.stop(plan_id, "operator");
    fetched.resolve();
    expect((await stopping).status).toBe("stopped");
    expect(await service.resume(plan_id)).toEqual({ plan_id, status: "running" });
    await reached.promise;
    expect((await service.status(plan_id)).status).toBe("running");
    planned.resolve();
    expect((await service.wait(plan_id, 120)).status).toBe("completed");
    expect([forecast.calls.length, planDay.calls.length]).toEqual([1, 1]);
  });
});

describe("a plan whose server stopped before its first checkpoint", () => {
  it("shows the create's row as running; plan_resume says why it cannot; plan_delete removes it", async () => {
    const db = new Database(join(dir, `orphan-${(schemas += 1)}.sqlite`));
    closers.push(() => void db.close());
    const { service } = serviceOn(new SqliteSaver(db));
    // What a create leaves when its server dies between taking the plan and its first checkpoint:
    // the row it writes once its run holds the plan (no checkpoint id, a run going on).
    const orphan = `${"0".repeat(24)}--weather`;
    const core = {
      goal: "cut short",
      stored: "planning",
      plan_version: null,
      steps: [],
      progress: { done: 0, total: 0 },
      timing: { started_at: null, last_progress_at: null },
      usage: { cost: 0, replan_cost: 0, input_tokens: 0, output_tokens: 0 },
      running: true,
    };
    await service.status(orphan).catch(() => undefined); // the status table is made on first use
    db.prepare("INSERT INTO langgraph_replan_thread_status VALUES (?, '', ?)").run(orphan, JSON.stringify({ core }));
    expect(await service.status(orphan)).toMatchObject({ plan_id: orphan, goal: "cut short", status: "running" });
    await expect(service.resume(orphan)).rejects.toMatchObject({
      code: "invalid_resume",
      message:
        `plan "${orphan}" has no checkpoint yet: its run is starting (plan_wait for it), or its server stopped ` +
        "before the first one (plan_delete it and create it again)",
    });
    expect(await service.delete(orphan)).toEqual({ plan_id: orphan, deleted: true });
    await expect(service.status(orphan)).rejects.toMatchObject({ code: "invalid_input", path: "plan_id" });
  });
});

describe("idempotency keys and new runs", () => {
  function sqliteService() {
    const db = new Database(join(dir, `keys-${(schemas += 1)}.sqlite`));
    closers.push(() => void db.close());
    const saver = new SqliteSaver(db);
    const tools = () => [scriptedTool("forecast", [{ forecast: "sunny" }]), scriptedTool("planDay", [{ day: "x" }])];
    const weather = createPlanManager({ tools: tools(), planner: staticPlanner({ plan: confirmed }) }).compile({
      checkpointer: saver,
    });
    const other = createPlanManager({ tools: tools(), planner: staticPlanner({ plan: confirmed }) }).compile({
      checkpointer: saver,
    });
    const service = new PlanService({ graphs: { weather, other }, saver });
    closers.push(() => service.close());
    return service;
  }

  it("a key reused with another goal, context, plan or graph is refused naming the key; the same request returns the plan", async () => {
    const service = sqliteService();
    const first = await service.create({ goal: "transfer 10,000 EUR", context: { to: "ana" }, idempotency_key: "k-1" });
    expect(first.created).toBe(true);
    await service.wait(first.plan_id, 120);
    const again = await service.create({ goal: "transfer 10,000 EUR", context: { to: "ana" }, idempotency_key: "k-1" });
    expect(again).toMatchObject({ plan_id: first.plan_id, created: false, status: "awaiting_human" });
    const conflict = {
      code: "idempotency_conflict",
      path: "idempotency_key",
      message:
        `idempotency_key "k-1" was used for plan "${first.plan_id}" with another goal, context, plan or graph: ` +
        "send the same request to get that plan back, or use a new key for a new plan",
    };
    await expect(service.create({ goal: "book a trip", idempotency_key: "k-1" })).rejects.toMatchObject(conflict);
    await expect(
      service.create({ goal: "transfer 10,000 EUR", context: { to: "bob" }, idempotency_key: "k-1" }),
    ).rejects.toMatchObject(conflict);
    await expect(
      service.create({ goal: "transfer 10,000 EUR", context: { to: "ana" }, plan: confirmed, idempotency_key: "k-1" }),
    ).rejects.toMatchObject(conflict);
    await expect(
      service.create({ goal: "transfer 10,000 EUR", context: { to: "ana" }, graph: "other", idempotency_key: "k-1" }),
    ).rejects.toMatchObject(conflict);
    // A key with new_run names a plan already: a new run needs a new key.
    await expect(
      service.create({ goal: "transfer 10,000 EUR", context: { to: "ana" }, idempotency_key: "k-1", new_run: true }),
    ).rejects.toMatchObject({ code: "idempotency_conflict", path: "idempotency_key" });
    expect((await service.list()).plans.map((p) => p.plan_id)).toEqual([first.plan_id]);
  });

  it("the same request with its keys in another order, and with a plan draft, is the same request", async () => {
    const service = sqliteService();
    const plan = { steps: [{ id: "only", goal: "plan the day", tool: "planDay", args: { a: 1, b: [1, 2] } }] };
    const first = await service.create({ goal: "g", context: { x: 1, y: { p: 1, q: 2 } }, plan, idempotency_key: "k" });
    await service.wait(first.plan_id, 120);
    const reordered = { steps: [{ args: { b: [1, 2], a: 1 }, tool: "planDay", goal: "plan the day", id: "only" }] };
    expect(
      await service.create({ goal: "g", context: { y: { q: 2, p: 1 }, x: 1 }, plan: reordered, idempotency_key: "k" }),
    ).toMatchObject({ plan_id: first.plan_id, status: "completed", created: false });
  });

  it("the same key and request while the plan's only checkpoint is its input (no goal read yet) returns the plan", async () => {
    const db = new Database(join(dir, `input-${(schemas += 1)}.sqlite`));
    closers.push(() => void db.close());
    const saver = new SqliteSaver(db);
    // The run stops right after writing its first checkpoint, which holds the input unread.
    const inputWritten = deferred();
    const carryOn = deferred();
    const put = saver.put.bind(saver);
    saver.put = async (...args: Parameters<typeof put>) => {
      const written = await put(...args);
      if (args[2].source === "input") {
        inputWritten.resolve();
        await carryOn.promise;
      }
      return written;
    };
    const { service } = serviceOn(saver);
    const first = await service.create({ goal: "read later", context: { n: 1 }, idempotency_key: "early" });
    await inputWritten.promise;
    expect(await service.create({ goal: "read later", context: { n: 1 }, idempotency_key: "early" })).toEqual({
      ...first,
      status: "running",
      created: false,
    });
    await expect(service.create({ goal: "something else", idempotency_key: "early" })).rejects.toMatchObject({
      code: "idempotency_conflict",
    });
    carryOn.resolve();
    expect((await service.wait(first.plan_id, 120)).status).toBe("awaiting_human");
  });

  it("two creates at once with one key and different goals: one plan, the other refused", async () => {
    const service = sqliteService();
    const [one, two] = await Promise.allSettled([
      service.create({ goal: "transfer 10,000 EUR", idempotency_key: "k-2" }),
      service.create({ goal: "book a trip", idempotency_key: "k-2" }),
    ]);
    expect(one).toMatchObject({ status: "fulfilled", value: { created: true } });
    expect(two).toMatchObject({ status: "rejected", reason: { code: "idempotency_conflict" } });
  });

  it("after an aborted plan the same goal returns it; new_run starts a new plan", async () => {
    const service = sqliteService();
    const first = await service.create({ goal: "a day out" });
    await service.wait(first.plan_id, 120);
    await service.answer(first.plan_id, { action: "abort", reason: "rain after all" });
    expect((await service.wait(first.plan_id, 120)).status).toBe("aborted");
    expect(await service.create({ goal: "a day out" })).toMatchObject({
      plan_id: first.plan_id,
      status: "aborted",
      created: false,
    });
    const fresh = await service.create({ goal: "a day out", new_run: true });
    expect(fresh).toMatchObject({ status: "running", created: true });
    expect(fresh.plan_id).not.toBe(first.plan_id);
    expect((await service.wait(fresh.plan_id, 120)).status).toBe("awaiting_human");
    // The dedupe window now returns the new plan.
    expect((await service.create({ goal: "a day out" })).plan_id).toBe(fresh.plan_id);
  });

  it("two creates at once with the same goal and parent_plan_id start one plan", async () => {
    const service = sqliteService();
    const parent = await service.create({ goal: "the first try" });
    await service.wait(parent.plan_id, 120);
    const [one, two] = await Promise.all([
      service.create({ goal: "the second try", parent_plan_id: parent.plan_id }),
      service.create({ goal: "the second try", parent_plan_id: parent.plan_id }),
    ]);
    expect(one.plan_id).toBe(two.plan_id);
    expect([one.created, two.created].sort()).toEqual([false, true]);
    await service.wait(one.plan_id, 120);
    expect((await service.list()).plans.map((p) => p.plan_id).sort()).toEqual([parent.plan_id, one.plan_id].sort());
    expect((await service.status(one.plan_id)).parent_plan_id).toBe(parent.plan_id);
  });

  it("plan_create's input schema documents new_run", async () => {
    const { client } = await connectInMemory(sqliteService());
    const { tools } = await client.listTools();
    const create = tools.find((t) => t.name === "plan_create")!;
    expect((create.inputSchema.properties as Record<string, { type?: string; description?: string }>).new_run).toEqual({
      type: "boolean",
      description:
        "Start a new plan even when the same goal, context and graph made one within 10 minutes " +
        "(after a plan that failed, was aborted or stopped). Not with an idempotency_key that names a plan already.",
    });
    await client.close();
  });
});

describe("two langgraph-replan mcp --db postgresql:// processes", () => {
  it("a plan created on one is waited on at once on the other; a question answered on one is not returned by a wait on the other", async () => {
    const start = async () => {
      const { client, call } = await startStdio({
        db: pg.url,
        config: "test/fixtures/mcp-races/langgraph.json",
        env: { LANGGRAPH_CLI_NO_ANALYTICS: "1" },
        name: "race-agent",
      });
      closers.push(() => client.close());
      return async (name: string, args: Record<string, unknown>) => {
        const result = await call(name, args);
        return result.structuredContent ?? JSON.parse(result.content[0]!.text);
      };
    };
    const one = await start();
    const two = await start();
    for (let round = 0; round < 4; round += 1) {
      const { plan_id } = await one("plan_create", { goal: `a day out across servers ${round}` });
      expect(await two("plan_wait", { plan_id, timeout_s: 120 })).toMatchObject({
        plan_id,
        status: "awaiting_human",
        timed_out: false,
        question: { kind: "human_step", stepId: "confirm" },
      });
      expect(await two("plan_answer", { plan_id, answer: complete })).toEqual({ plan_id, status: "running" });
      expect(await one("plan_wait", { plan_id, timeout_s: 120 })).toMatchObject({
        plan_id,
        status: "completed",
        timed_out: false,
        progress: { done: 3, total: 3 },
      });
    }
  }, 180_000);
});
