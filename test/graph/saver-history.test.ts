/**
 * Pins the one-query history of the SQLite and PostgreSQL saver adapters (src/storage/sqlite.ts,
 * src/storage/postgres.ts; decision record 0023): at every checkpoint of a thread, its one-query history equals what
 * LangGraph's own `getDeltaChannelHistory` walk returns, on both savers, through a replan, a pause,
 * `updateState`, time travel and snapshots; and what users read through the manager (getState,
 * getStateHistory) equals what the unwrapped saver gives. An upgrade that changes the savers'
 * storage fails here by name.
 */
import { Annotation, BaseCheckpointSaver, Command, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type { RunnableConfig } from "@langchain/core/runnables";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { staticPlanner, type PlanDraft } from "../../src/index.js";
import { appendBatch, CheckedDeltaChannel } from "../../src/runtime/delta-channel.js";
import { originalSaver, withDirectMethods as withDirectHistory } from "../../src/storage/index.js";
import { codingPlan, codingReplan, createCodingTools } from "../fixtures/coding-agent.js";
import { harness, scriptedTool, type Loose } from "../helpers/graph.js";
import { startPostgres, type PgServer } from "../../test-reliability/helpers/postgres.js";

const DELTA = ["plan", "planHistory", "steps", "facts", "decisions", "replans", "sideEffects", "usage"];
const baseWalk = BaseCheckpointSaver.prototype.getDeltaChannelHistory;

let pg: PgServer;
const closers: (() => Promise<void> | void)[] = [];
beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);
afterAll(async () => {
  for (const close of closers) await close();
  pg?.stop();
});

const savers: Record<string, () => Promise<BaseCheckpointSaver>> = {
  SQLite: async () => {
    const saver = SqliteSaver.fromConnString(":memory:");
    closers.push(() => void saver.db.close());
    return saver;
  },
  PostgreSQL: async () => {
    const saver = PostgresSaver.fromConnString(pg.url);
    await saver.setup();
    closers.push(() => saver.end());
    return saver;
  },
};

/** LangGraph's own walk and the seam's query agree at every checkpoint of the thread, forks included. */
async function expectSameHistories(saver: BaseCheckpointSaver, threadId: string, channels = DELTA) {
  const view = withDirectHistory(saver);
  expect(view).not.toBe(saver);
  let checked = 0;
  const configs: RunnableConfig[] = [{ configurable: { thread_id: threadId } }];
  for await (const t of saver.list({ configurable: { thread_id: threadId } })) configs.push(t.config);
  for (const config of configs) {
    const base = await baseWalk.call(saver, { config, channels });
    expect(await view.getDeltaChannelHistory({ config, channels })).toEqual(base);
    checked += 1;
  }
  return checked;
}

/** A saver LangGraph's base walk answers: overriding the method keeps the seam away. */
function unwrapped(saver: BaseCheckpointSaver): BaseCheckpointSaver {
  const plain = Object.create(saver) as BaseCheckpointSaver;
  Object.defineProperty(plain, "getDeltaChannelHistory", { value: (o: never) => baseWalk.call(saver, o) });
  return plain;
}

const work = () => scriptedTool("work", [(a: Record<string, unknown>) => ({ [`f${a.index}`]: `v${a.index}` })]);
const withHuman: PlanDraft = {
  steps: [
    { id: "s0", goal: "Step 0", tool: "work", args: { index: 0 }, produces: ["f0"] },
    { id: "s1", goal: "Step 1", tool: "work", args: { index: 1 }, produces: ["f1"], dependsOn: ["s0"] },
    { id: "ask", goal: "Ask", human: { prompt: "Go?" }, produces: ["ok"], dependsOn: ["s1"] },
    { id: "act", goal: "Act", tool: "work", args: { index: 9 }, produces: ["f9"], dependsOn: ["ask"] },
  ],
};

describe.each(Object.keys(savers))("one-query history on %s", (name) => {
  it("a replanned run: every checkpoint's history, getState and getStateHistory equal the base walk's", async () => {
    const saver = await savers[name]!();
    const thread = `coding-${name}`;
    const { tools } = createCodingTools("session.ts");
    const planner = staticPlanner({ plan: codingPlan, replan: codingReplan });
    const h = harness(planner, tools, { checkpointer: saver, threadId: thread });
    expect((await h.run()).status).toBe("completed");
    expect(await expectSameHistories(saver, thread)).toBeGreaterThan(10);

    const reference = harness(planner, createCodingTools("session.ts").tools, {
      checkpointer: unwrapped(saver),
      threadId: thread,
    });
    const state = await h.graph.getState(h.config);
    expect(state.values).toEqual((await reference.graph.getState(h.config)).values);
    expect((state.values as Loose).replans).toHaveLength(1);
    const listed = async (g: typeof h.graph) => {
      const all: unknown[] = [];
      for await (const s of g.getStateHistory(h.config)) all.push([s.config, s.values, s.next]);
      return all;
    };
    expect(await listed(h.graph)).toEqual(await listed(reference.graph));
  });

  it("paused, updated, answered and forked from an earlier checkpoint: the same histories", async () => {
    const saver = await savers[name]!();
    const thread = `paused-${name}`;
    const h = harness(withHuman, [work()], { checkpointer: saver, threadId: thread });
    expect((await h.run()).status).toBe("awaiting_human");
    await h.graph.updateState(h.config, { scopeChanges: ["also notify"] });
    const done = await h.run(new Command({ resume: { action: "complete", output: { ok: true } } }));
    // The scope change is applied by a replan after the answer: the run pauses for its review.
    expect([done.status, Object.keys(done.facts)]).toEqual(["awaiting_human", ["f0", "f1", "ok"]]);
    let planned: RunnableConfig | undefined;
    for await (const s of h.graph.getStateHistory(h.config))
      if ((s.values as Loose).plan && Object.keys((s.values as Loose).steps).length === 0) planned = s.config;
    await h.graph.updateState(planned!, { scopeChanges: ["forked"] });
    const forked = await h.graph.getState(h.config);
    expect(Object.keys((forked.values as Loose).facts)).toEqual([]);
    expect((forked.values as Loose).scopeChanges).toEqual(["forked"]);
    expect(await expectSameHistories(saver, thread)).toBeGreaterThan(8);
  });

  it("snapshots and plain values stored under a delta channel are the seed, as in the base walk", async () => {
    const saver = await savers[name]!();
    const Item = z.object({ n: z.number() });
    const log = (every: number) =>
      new CheckedDeltaChannel<{ n: number }[], { n: number } | { n: number }[]>(
        "log",
        Item,
        appendBatch,
        () => [],
        every,
      );
    const State = Annotation.Root({ log: log(3), other: log(1000), left: Annotation<number>() });
    const step = (s: typeof State.State) => ({ log: { n: s.log.length }, other: { n: -1 }, left: s.left - 1 });
    const g = new StateGraph(State)
      .addNode("step", step)
      .addEdge(START, "step")
      .addConditionalEdges("step", (s) => (s.left > 0 ? "step" : END))
      .compile({ checkpointer: withDirectHistory(saver) });
    const config = { configurable: { thread_id: `snap-${name}` } };
    await g.invoke({ left: 8 }, config);
    expect((await g.getState(config)).values.log.map((i: { n: number }) => i.n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const latest = await baseWalk.call(saver, { config, channels: ["log", "other"] });
    expect(latest.log!.seed).toBeDefined();
    expect(latest.other!.seed).toBeUndefined();
    expect(await expectSameHistories(saver, `snap-${name}`, ["log", "other", "left"])).toBe(11);
  });
});

describe("PostgresSaver writes in one statement per put and putWrites", () => {
  it("stores the same rows as the saver's own put and putWrites, and a run reads back the same", async () => {
    const open = async (schema: string) => {
      const saver = PostgresSaver.fromConnString(pg.url, { schema });
      await saver.setup();
      closers.push(() => saver.end());
      return saver;
    };
    const batched = await open("batched");
    const own = await open("own");
    const planner = staticPlanner({ plan: codingPlan, replan: codingReplan });
    const runOn = (saver: BaseCheckpointSaver) =>
      harness(planner, createCodingTools("session.ts").tools, { checkpointer: saver, threadId: "same" });
    const a = runOn(batched);
    const b = runOn(unwrapped(own));
    expect((await a.run()).status).toBe("completed");
    expect((await b.run()).status).toBe("completed");
    const pool = (batched as unknown as { pool: { query: (q: string) => Promise<{ rows: { r: string }[] }> } }).pool;
    // Checkpoint ids, task ids and version suffixes are random: the rest of every row must match.
    const rows = async (schema: string) => ({
      blobs: (
        await pool.query(
          `SELECT channel || type || encode(blob, 'hex') AS r FROM ${schema}.checkpoint_blobs ORDER BY 1`,
        )
      ).rows,
      writes: (
        await pool.query(
          `SELECT idx || channel || type || encode(blob, 'hex') AS r FROM ${schema}.checkpoint_writes ORDER BY 1`,
        )
      ).rows,
      checkpoints: (await pool.query(`SELECT count(*) || '' AS r FROM ${schema}.checkpoints`)).rows,
    });
    const stored = await rows("batched");
    expect(stored.writes.length).toBeGreaterThan(50);
    expect(stored).toEqual(await rows("own"));
    const values = async (h: ReturnType<typeof runOn>) => {
      const all: unknown[] = [];
      for await (const s of h.graph.getStateHistory(h.config)) all.push([s.values, s.next]);
      return all;
    };
    expect(await values(a)).toEqual(await values(b));
  });
});

describe("what the seam relies on in LangGraph's savers", () => {
  it("both savers inherit the base walk and keep the storage methods the seam reads", () => {
    expect(SqliteSaver.prototype.getDeltaChannelHistory).toBe(baseWalk);
    expect(PostgresSaver.prototype.getDeltaChannelHistory).toBe(baseWalk);
  });

  it("the tables and columns it queries", async () => {
    const sqlite = (await savers.SQLite!()) as SqliteSaver;
    await sqlite.getTuple({ configurable: { thread_id: "none" } }); // creates the tables
    const columns = (table: string) =>
      (sqlite.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
    expect(columns("checkpoints")).toEqual([
      "thread_id",
      "checkpoint_ns",
      "checkpoint_id",
      "parent_checkpoint_id",
      "type",
      "checkpoint",
      "metadata",
    ]);
    expect(columns("writes")).toEqual([
      "thread_id",
      "checkpoint_ns",
      "checkpoint_id",
      "task_id",
      "idx",
      "channel",
      "type",
      "value",
    ]);
    const postgres = (await savers.PostgreSQL!()) as PostgresSaver;
    const fields = postgres as unknown as { pool: { query: (s: string) => Promise<{ rows: { t: string }[] }> } };
    expect((postgres as unknown as { options: { schema: string } }).options.schema).toBe("public");
    const { rows } = await fields.pool.query(
      `SELECT table_name || '.' || string_agg(column_name, ',' ORDER BY column_name) AS t FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes')
       GROUP BY table_name ORDER BY table_name`,
    );
    expect(rows.map((r) => r.t)).toEqual([
      "checkpoint_blobs.blob,channel,checkpoint_ns,thread_id,type,version",
      "checkpoint_writes.blob,channel,checkpoint_id,checkpoint_ns,idx,task_id,thread_id,type",
      "checkpoints.checkpoint,checkpoint_id,checkpoint_ns,metadata,parent_checkpoint_id,thread_id,type",
    ]);
  });

  it("one view per saver, the caller's saver for the thread lock; other savers and overrides are used as they are", async () => {
    const sqlite = await savers.SQLite!();
    const view = withDirectHistory(sqlite);
    expect(withDirectHistory(sqlite)).toBe(view);
    expect(withDirectHistory(view)).toBe(view);
    expect(originalSaver(view)).toBe(sqlite);
    expect(view).toBeInstanceOf(SqliteSaver);
    const memory = new MemorySaver();
    expect(withDirectHistory(memory)).toBe(memory);
    class OwnStorage extends SqliteSaver {
      override async getTuple(config: RunnableConfig) {
        return super.getTuple(config);
      }
    }
    const own = new OwnStorage((sqlite as SqliteSaver).db);
    expect(withDirectHistory(own)).toBe(own);
    const overridden = unwrapped(sqlite);
    expect(withDirectHistory(overridden)).toBe(overridden);
  });

  it("a load reads the thread in one query instead of one getTuple per checkpoint", async () => {
    const saver = await savers.SQLite!();
    const plan: PlanDraft = {
      steps: Array.from({ length: 12 }, (_, i) => ({
        id: `s${i}`,
        goal: `Step ${i}`,
        tool: "work",
        args: { index: i },
        produces: [`f${i}`],
        ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}),
      })),
    };
    const h = harness(plan, [work()], { checkpointer: saver, threadId: "count" });
    await h.run();
    const spy = vi.spyOn(SqliteSaver.prototype, "getTuple");
    try {
      expect(Object.keys((await h.graph.getState(h.config)).values.facts)).toHaveLength(12);
      expect(spy).toHaveBeenCalledTimes(1);
      spy.mockClear();
      await baseWalk.call(saver, { config: h.config, channels: DELTA });
      expect(spy.mock.calls.length).toBeGreaterThan(12);
    } finally {
      spy.mockRestore();
    }
  });
});
