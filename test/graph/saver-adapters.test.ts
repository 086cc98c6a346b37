/**
 * One suite every saver adapter passes (src/storage/, docs/decisions/0032-saver-adapters.md):
 * SQLite and PostgreSQL, and the fallback on MemorySaver and on a saver of another shape. Each
 * lists threads with their latest checkpoint's metadata, deletes a thread's checkpoints and writes,
 * and claims threads — across processes where the database can, in this process otherwise; the
 * database backends keep status rows (storage/status-store.ts).
 */
import { hostname } from "node:os";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { isPlanManagerError } from "../../src/errors.js";
import { deleteThread, holdThread } from "../../src/graph/process-claim.js";
import { saverAdapter, type ThreadClaim } from "../../src/storage/index.js";
import { startPostgres, type PgServer } from "../../test-reliability/helpers/postgres.js";
import { harness, scriptedTool } from "../helpers/graph.js";
import { KeyValueSaver } from "../helpers/key-value-saver.js";

let pg: PgServer;
const closers: (() => Promise<void> | void)[] = [];
beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);
afterAll(async () => {
  for (const close of closers) await close();
  pg?.stop();
});

let schemas = 0;
interface BackendCase {
  open: () => Promise<BaseCheckpointSaver>;
  name: string;
  claims: string;
  /** What a refused claim says, where the claim is in the database. */
  heldBy?: string;
}

const backends: Record<string, BackendCase> = {
  SQLite: {
    name: "SQLite",
    claims: "database",
    heldBy: `pid ${process.pid} on ${hostname()}`,
    open: async () => {
      const saver = SqliteSaver.fromConnString(":memory:");
      closers.push(() => void saver.db.close());
      return saver;
    },
  },
  PostgreSQL: {
    name: "PostgreSQL",
    claims: "database",
    heldBy: "it holds the thread's lock in PostgreSQL",
    open: async () => {
      const saver = PostgresSaver.fromConnString(pg.url, { schema: `adapters${(schemas += 1)}` });
      await saver.setup();
      closers.push(() => saver.end());
      return saver;
    },
  },
  MemorySaver: { name: "any saver", claims: "process", open: async () => new MemorySaver() },
  "a saver of another shape": { name: "any saver", claims: "process", open: async () => new KeyValueSaver() },
};

const plan = {
  steps: [
    { id: "a", goal: "A", tool: "work", args: {}, produces: ["x"] },
    { id: "b", goal: "B", tool: "work", args: {}, produces: ["y"], dependsOn: ["a"] },
  ],
};

/** Runs a two-step plan to its end on `thread`. */
async function runThread(saver: BaseCheckpointSaver, thread: string) {
  const h = harness(plan, [scriptedTool("work", [{ x: 1, y: 2 }])], { checkpointer: saver, threadId: thread });
  expect((await h.run()).status).toBe("completed");
  return h;
}

async function latest(saver: BaseCheckpointSaver, thread: string) {
  const tuple = await saver.getTuple({ configurable: { thread_id: thread, checkpoint_ns: "" } });
  return { threadId: thread, checkpointId: tuple!.checkpoint.id, metadata: tuple!.metadata };
}

async function checkpointCount(saver: BaseCheckpointSaver, thread: string) {
  let n = 0;
  for await (const _ of saver.list({ configurable: { thread_id: thread } })) n += 1;
  return n;
}

describe.each(Object.keys(backends))("the saver adapter for %s", (backend) => {
  const { open, name, claims } = backends[backend]!;

  it("is chosen by the saver's shape, once per saver (a view of it gets the same one)", async () => {
    const saver = await open();
    const adapter = saverAdapter(saver);
    expect([adapter.name, adapter.claims]).toEqual([name, claims]);
    expect(saverAdapter(saver)).toBe(adapter);
    const h = harness(plan, [], { checkpointer: saver });
    expect(saverAdapter((h.graph as unknown as { checkpointer: BaseCheckpointSaver }).checkpointer)).toBe(adapter);
  });

  it("lists each thread once, newest first, with its latest checkpoint's id and metadata, a page at a time", async () => {
    const saver = await open();
    const adapter = saverAdapter(saver);
    expect(await adapter.listThreads()).toEqual([]);
    await runThread(saver, "older");
    await runThread(saver, "newer");
    const [newer, older] = [await latest(saver, "newer"), await latest(saver, "older")];
    expect(newer.metadata).toMatchObject({ source: "loop" });
    expect(await adapter.listThreads()).toEqual([newer, older]);
    expect(await adapter.listThreads({ limit: 1 })).toEqual([newer]);
    expect(await adapter.listThreads({ limit: 1, before: newer.checkpointId })).toEqual([older]);
    expect(await adapter.listThreads({ before: older.checkpointId })).toEqual([]);
  });

  it("refuses a page size or cursor that is not one, naming the option", async () => {
    const adapter = saverAdapter(await open());
    const reasons: unknown[] = [];
    for (const options of [{ limit: Number.NaN }, { limit: -1 }, { limit: 1.5 }, { limit: 2n }, { before: 7 }]) {
      const error = await adapter.listThreads(options as never).catch((e: unknown) => e);
      reasons.push(isPlanManagerError(error) && [error.code, error.path, error.message]);
    }
    expect(reasons).toEqual([
      ["invalid_options", "limit", "limit must be a whole number ≥ 0, got NaN"],
      ["invalid_options", "limit", "limit must be a whole number ≥ 0, got -1"],
      ["invalid_options", "limit", "limit must be a whole number ≥ 0, got 1.5"],
      ["invalid_options", "limit", "limit must be a whole number ≥ 0, got 2"],
      ["invalid_options", "before", "before must be a checkpoint id (a string), got number"],
    ]);
  });

  it("deletes a thread's checkpoints and writes and leaves the other threads as they were", async () => {
    const saver = await open();
    const adapter = saverAdapter(saver);
    const kept = await runThread(saver, "kept");
    const gone = await runThread(saver, "gone");
    const before = await kept.state();
    expect(await checkpointCount(saver, "gone")).toBeGreaterThan(3);
    expect(await adapter.deleteThread("gone")).toEqual({ deleted: true });
    expect(await checkpointCount(saver, "gone")).toBe(0);
    expect(await gone.graph.getState(gone.config)).toMatchObject({ values: {}, next: [] });
    expect(await kept.state()).toEqual(before);
    expect((await adapter.listThreads()).map((t) => t.threadId)).toEqual(["kept"]);
    expect(await adapter.deleteThread("never-there")).toEqual({ deleted: true });
  });

  it("deleteThread refuses a thread a run of this process holds, and deletes it once the run has let go", async () => {
    const saver = await open();
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    const slow = scriptedTool("work", [async () => (await gate, { x: 1, y: 2 })]);
    const h = harness(plan, [slow], { checkpointer: saver, threadId: "busy" });
    const running = h.run();
    while (slow.calls.length === 0) await new Promise((r) => setTimeout(r, 1));
    const refused = await deleteThread(saver, "busy").catch((error: unknown) => error);
    expect(isPlanManagerError(refused) && [refused.code, refused.message]).toEqual([
      "thread_busy",
      'thread "busy" is already running in this process; wait for that run to finish (or use another thread_id): ' +
        "two runs on one thread would both call every tool",
    ]);
    finish();
    expect((await running).status).toBe("completed");
    await deleteThread(saver, "busy");
    expect(await checkpointCount(saver, "busy")).toBe(0);
  });
});

const inDatabase = Object.keys(backends).filter((b) => backends[b]!.claims === "database");
const inProcess = Object.keys(backends).filter((b) => backends[b]!.claims === "process");

describe.each(inDatabase)("a claim through the %s adapter", (backend) => {
  it("is seen by every other claim on the database until released; a held thread is not deleted", async () => {
    const { open, heldBy } = backends[backend]!;
    const saver = await open();
    const adapter = saverAdapter(saver);
    await runThread(saver, "held");
    expect(await adapter.heldBy("held")).toBeUndefined();
    const first = (await adapter.claimThread("held")) as ThreadClaim;
    expect(await adapter.claimThread("held")).toEqual({ heldBy });
    // Asked without taking it: a read, so it never keeps a run from claiming.
    expect(await adapter.heldBy("held")).toBe(heldBy);
    expect(await adapter.heldBy("other")).toBeUndefined();
    expect(await adapter.deleteThread("held")).toEqual({ deleted: false, heldBy });
    const refused = await deleteThread(saver, "held").catch((error: unknown) => error);
    expect(isPlanManagerError(refused) && [refused.code, refused.message]).toEqual([
      "thread_busy",
      `thread "held" is being run by another process (${heldBy}); wait for that run to finish ` +
        "(or use another thread_id): two runs on one thread would both call every tool",
    ]);
    expect(await checkpointCount(saver, "held")).toBeGreaterThan(3);
    await first.release();
    expect(await adapter.heldBy("held")).toBeUndefined();
    const again = (await adapter.claimThread("held")) as ThreadClaim;
    expect(typeof again.release).toBe("function");
    await again.release();
    await deleteThread(saver, "held");
    expect(await checkpointCount(saver, "held")).toBe(0);
  });
});

/**
 * Makes every run's claim on `saver` slow to let go, as a loaded machine can: its release reaches
 * the database only once the next deletion through the adapter has been answered (or after 500 ms,
 * for code that waits for the release first and would otherwise wait forever). Returns the threads
 * released so far, in order.
 */
function slowReleases(saver: BaseCheckpointSaver): string[] {
  const adapter = saverAdapter(saver);
  const claim = adapter.claimThread.bind(adapter);
  const remove = adapter.deleteThread.bind(adapter);
  let answered!: () => void;
  const deletionAnswered = new Promise<void>((resolve) => (answered = resolve));
  const released: string[] = [];
  vi.spyOn(adapter, "deleteThread").mockImplementation(async (...args) => {
    try {
      return await remove(...args);
    } finally {
      answered();
    }
  });
  vi.spyOn(adapter, "claimThread").mockImplementation(async (threadId) => {
    const held = await claim(threadId);
    if (!("release" in held)) return held;
    return {
      release: async () => {
        await Promise.race([deletionAnswered, new Promise((resolve) => setTimeout(resolve, 500))]);
        await held.release();
        released.push(threadId);
      },
    };
  });
  return released;
}

describe.each(inDatabase)("a run's claim through the %s adapter, slow to let go", (backend) => {
  it("is released before the run's promise resolves: a delete right after it deletes the thread", async () => {
    const saver = await backends[backend]!.open();
    const released = slowReleases(saver);
    const h = harness(plan, [scriptedTool("work", [{ x: 1, y: 2 }])], { checkpointer: saver, threadId: "just-ran" });
    const out = await h.graph.invoke({ goal: "test goal", context: {} } as never, h.config);
    const releasedByThen = [...released];
    expect([out.status, releasedByThen, await deleteThread(saver, "just-ran")]).toEqual([
      "completed",
      ["just-ran"],
      true,
    ]);
    expect(await checkpointCount(saver, "just-ran")).toBe(0);
  });

  it("is waited for by deleteThread when this process let go of the thread in the background", async () => {
    const saver = await backends[backend]!.open();
    await runThread(saver, "let-go");
    const released = slowReleases(saver);
    // A stopped run frees its thread when its last tool call returns, long after its caller moved on.
    const run = await holdThread({ checkpointer: saver, threadId: "let-go", namespace: "" });
    run.end();
    expect(await deleteThread(saver, "let-go")).toBe(true);
    expect([released, await checkpointCount(saver, "let-go")]).toEqual([["let-go"], 0]);
  });
});

describe.each(inDatabase)("listing through the %s adapter", (backend) => {
  it("reads the database in one query, not every checkpoint through the saver's own list", async () => {
    const saver = await backends[backend]!.open();
    const adapter = saverAdapter(saver);
    await runThread(saver, "one");
    const list = vi.spyOn(saver, "list");
    expect((await adapter.listThreads()).map((t) => t.threadId)).toEqual(["one"]);
    expect(list).toHaveBeenCalledTimes(0);
  });
});

describe.each(inDatabase)("status rows through the %s adapter", (backend) => {
  it("keep one row per thread, never replaced by an older checkpoint's, and go with the thread", async () => {
    const saver = await backends[backend]!.open();
    const statuses = saverAdapter(saver).statuses!;
    await runThread(saver, "one");
    await runThread(saver, "two");
    expect(await statuses.read(["one", "two"])).toEqual(new Map());
    await statuses.write("one", { checkpointId: "0002", summary: '{"n":2}' });
    await statuses.write("one", { checkpointId: "0001", summary: '{"n":1}' });
    await statuses.write("two", { checkpointId: "0001", summary: '{"n":1}' });
    await statuses.write("two", { checkpointId: "0003", summary: '{"n":3}' });
    expect(await statuses.read(["one", "two", "three"])).toEqual(
      new Map([
        ["one", { checkpointId: "0002", summary: '{"n":2}' }],
        ["two", { checkpointId: "0003", summary: '{"n":3}' }],
      ]),
    );
    expect(await deleteThread(saver, "one")).toBe(true);
    expect([...(await statuses.read(["one", "two"])).keys()]).toEqual(["two"]);
  });
});

describe.each(inProcess)("a claim through the %s adapter", (backend) => {
  it("holds nothing outside this process: the in-process hold is the only one", async () => {
    const saver = await backends[backend]!.open();
    const adapter = saverAdapter(saver);
    const first = (await adapter.claimThread("held")) as ThreadClaim;
    const second = (await adapter.claimThread("held")) as ThreadClaim;
    expect([typeof first.release, typeof second.release]).toEqual(["function", "function"]);
    expect(await adapter.heldBy("held")).toBeUndefined();
    await Promise.all([first.release(), second.release()]);
  });
});
