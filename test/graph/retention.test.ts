/**
 * Thread retention (src/graph/retention.ts, docs/decisions/0036-thread-retention.md)
 * on a SQLite file and on PostgreSQL: listing a page at a time with archived threads left out,
 * archiving, deleting every row of a thread, pruning by age and status — and refusing a thread a
 * run holds, in this process and through the database from another connection. Checkpoints are
 * written with chosen times and statuses, so ages are exact without a clock.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { emptyCheckpoint, MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { isPlanManagerError } from "../../src/errors.js";
import { parseDuration } from "../../src/graph/duration.js";
import { archiveThread, deleteThread, listThreads, pruneThreads, unarchiveThread } from "../../src/graph/retention.js";
import { saverAdapter, type ThreadClaim } from "../../src/storage/index.js";
import { CLAIMS_TABLE } from "../../src/storage/sqlite-claim.js";
import { startPostgres, type PgServer } from "../../test-reliability/helpers/postgres.js";
import { harness, scriptedTool } from "../helpers/graph.js";

let pgServer: PgServer;
let pool: Pool;
const dir = mkdtempSync(join(tmpdir(), "retention-"));
const closers: (() => Promise<void> | void)[] = [];
beforeAll(async () => {
  pgServer = await startPostgres();
  pool = new Pool({ connectionString: pgServer.url, max: 2 });
}, 120_000);
afterAll(async () => {
  for (const close of closers) await close();
  await pool?.end();
  pgServer?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

const DAY = 86_400_000;
const NOW = Date.parse("2026-06-01T00:00:00.000Z");
const daysAgo = (n: number) => new Date(NOW - n * DAY).toISOString();

interface Store {
  saver: BaseCheckpointSaver;
  /** Another connection to the same storage: what a second process would open. */
  other(): Promise<BaseCheckpointSaver>;
  /** The thread's rows: checkpoints, writes, blobs (0 where the backend has no such table), claims. */
  rows(thread: string): Promise<number[]>;
}

let files = 0;
let schemas = 0;
const backends: Record<string, () => Promise<Store>> = {
  SQLite: async () => {
    const file = join(dir, `checkpoints-${(files += 1)}.sqlite`);
    const open = () => {
      const saver = SqliteSaver.fromConnString(file);
      closers.push(() => void saver.db.close());
      return saver;
    };
    const saver = open();
    return {
      saver,
      other: async () => open(),
      rows: async (thread) => {
        const count = (table: string) =>
          (saver.db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE thread_id = ?`).get(thread) as { n: number }).n;
        const claims = saver.db.prepare("SELECT name FROM sqlite_master WHERE name = ?").get(CLAIMS_TABLE);
        return [count("checkpoints"), count("writes"), 0, claims ? count(CLAIMS_TABLE) : 0];
      },
    };
  },
  PostgreSQL: async () => {
    const schema = `retention${(schemas += 1)}`;
    const open = async () => {
      const saver = PostgresSaver.fromConnString(pgServer.url, { schema });
      await saver.setup();
      closers.push(() => saver.end());
      return saver;
    };
    const saver = await open();
    return {
      saver,
      other: open,
      rows: async (thread) => {
        const out: number[] = [];
        for (const table of ["checkpoints", "checkpoint_writes", "checkpoint_blobs"]) {
          const { rows } = await pool.query(
            `SELECT COUNT(*)::int AS n FROM "${schema}".${table} WHERE thread_id = $1`,
            [thread],
          );
          out.push(rows[0].n);
        }
        // A claim on PostgreSQL is an advisory lock: nothing is stored.
        return [...out, 0];
      },
    };
  },
};

/**
 * Writes a top-level checkpoint with this time and run status, a write beside it, and a subgraph's
 * checkpoint under another namespace; resolves to the top-level checkpoint's id.
 */
async function seed(saver: BaseCheckpointSaver, thread: string, ts: string, status: string): Promise<string> {
  let id = "";
  for (const ns of ["", "child:1"]) {
    const checkpoint = { ...emptyCheckpoint(), ts, channel_values: { status }, channel_versions: { status: 1 } };
    const config = await saver.put(
      { configurable: { thread_id: thread, checkpoint_ns: ns } },
      checkpoint,
      {
        source: "loop",
        step: 1,
        parents: {},
      },
      { status: 1 },
    );
    await saver.putWrites(config, [["status", status]], "task-1");
    if (ns === "") id = checkpoint.id;
  }
  return id;
}

const ids = async (saver: BaseCheckpointSaver, options = {}) =>
  (await listThreads(saver, options)).threads.map((t) => t.threadId);

async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  return isPlanManagerError(error) ? [error.code, error.path, error.message] : error;
}

/** Ids that a LIKE pattern, string-built SQL or an object used as a map would confuse. */
const HOSTILE = ["a%", "a_c", "abc", "it's", 'say "hi"', "__proto__", "x'); DROP TABLE checkpoints; --"];

describe.each(Object.keys(backends))("thread retention on %s", (backend) => {
  it("lists threads newest first a page at a time, archived ones only when asked, and unarchives", async () => {
    const { saver } = await backends[backend]!();
    expect(await listThreads(saver)).toEqual({ threads: [] });
    for (const [i, thread] of ["t1", "t2", "t3", "t4", "t5"].entries())
      await seed(saver, thread, daysAgo(5 - i), "completed");
    await archiveThread(saver, "t4", { now: NOW });
    await archiveThread(saver, "t4", { now: NOW + 1 });
    await archiveThread(saver, "t2", { now: NOW });
    const first = await listThreads(saver, { limit: 2 });
    expect(first.threads.map((t) => [t.threadId, t.archived])).toEqual([
      ["t5", false],
      ["t3", false],
    ]);
    expect(first.nextCursor).toMatch(/^c1\./);
    expect(await listThreads(saver, { limit: 2, cursor: first.nextCursor })).toMatchObject({
      threads: [{ threadId: "t1", archived: false }],
    });
    expect((await listThreads(saver, { limit: 2, cursor: first.nextCursor })).nextCursor).toBeUndefined();
    expect(await ids(saver, { archived: "only" })).toEqual(["t4", "t2"]);
    expect(await ids(saver, { archived: "include" })).toEqual(["t5", "t4", "t3", "t2", "t1"]);
    const onlyOne = await listThreads(saver, { archived: "only", limit: 1 });
    expect(await ids(saver, { archived: "only", limit: 1, cursor: onlyOne.nextCursor })).toEqual(["t2"]);
    expect(await unarchiveThread(saver, "t4")).toBe(true);
    expect(await unarchiveThread(saver, "t4")).toBe(false);
    expect(await ids(saver)).toEqual(["t5", "t4", "t3", "t1"]);
  });

  it("fills a page past more archived threads than one read holds, and the cursor carries on after it", async () => {
    const { saver } = await backends[backend]!();
    for (let i = 0; i < 150; i += 1) await seed(saver, `n${String(i).padStart(3, "0")}`, daysAgo(1), "completed");
    for (let i = 30; i < 150; i += 1) await archiveThread(saver, `n${String(i).padStart(3, "0")}`, { now: NOW });
    const first = await listThreads(saver, { limit: 10 });
    expect(first.threads.map((t) => t.threadId)).toEqual(Array.from({ length: 10 }, (_, i) => `n0${29 - i}`));
    const rest = await listThreads(saver, { limit: 100, cursor: first.nextCursor });
    expect([rest.threads.length, rest.threads[0]?.threadId, rest.threads.at(-1)?.threadId, rest.nextCursor]).toEqual([
      20,
      "n019",
      "n000",
      undefined,
    ]);
    expect((await listThreads(saver, { archived: "only", limit: 200 })).threads).toHaveLength(120);
  });

  it("archives and deletes exactly the thread named, whatever its id, and every row of it in every namespace", async () => {
    const { saver, rows } = await backends[backend]!();
    for (const thread of HOSTILE) await seed(saver, thread, daysAgo(1), "completed");
    expect(await rows("a_c")).toEqual(backend === "SQLite" ? [2, 2, 0, 0] : [2, 2, 2, 0]);
    // A claim left by a process that died (SQLite keeps claims as rows): deleting takes it over and removes it.
    await ((await saverAdapter(saver).claimThread("a_c")) as ThreadClaim).release();
    (saver as Partial<SqliteSaver>).db
      ?.prepare(`INSERT INTO ${CLAIMS_TABLE} VALUES (?, '', 'stale', ?, ?, ?)`)
      .run("a_c", 2 ** 22 + 7, hostname(), Date.now() + 60_000);
    expect((await rows("a_c"))[3]).toBe(backend === "SQLite" ? 1 : 0);
    await archiveThread(saver, "a%", { now: NOW });
    await archiveThread(saver, "__proto__", { now: NOW });
    expect(await ids(saver, { archived: "only" })).toEqual(["__proto__", "a%"]);
    await deleteThread(saver, "a_c");
    await deleteThread(saver, "__proto__");
    await deleteThread(saver, "x'); DROP TABLE checkpoints; --");
    expect(await rows("a_c")).toEqual([0, 0, 0, 0]);
    expect(await rows("__proto__")).toEqual([0, 0, 0, 0]);
    expect(await ids(saver, { archived: "include" })).toEqual(['say "hi"', "it's", "abc", "a%"]);
    expect(await rows("abc")).toEqual(backend === "SQLite" ? [2, 2, 0, 0] : [2, 2, 2, 0]);
    // The archive mark went with the thread: a new thread of the same id is listed.
    await seed(saver, "__proto__", daysAgo(0), "running");
    expect(await ids(saver, { archived: "only" })).toEqual(["a%"]);
  });

  it("refuses an unknown thread with thread_not_found and changes nothing", async () => {
    const { saver } = await backends[backend]!();
    await seed(saver, "kept", daysAgo(1), "completed");
    const message = 'no thread "ghost%" in this checkpointer (nothing was changed)';
    for (const call of [archiveThread, unarchiveThread, deleteThread])
      expect(await failure(call(saver, "ghost%"))).toEqual(["thread_not_found", "threadId", message]);
    expect(await ids(saver, { archived: "include" })).toEqual(["kept"]);
  });

  it("refuses to delete a thread another connection holds in the database, with thread_busy", async () => {
    const store = await backends[backend]!();
    await seed(store.saver, "held", daysAgo(1), "running");
    const claim = (await saverAdapter(await store.other()).claimThread("held")) as ThreadClaim;
    const refused = await failure(deleteThread(store.saver, "held"));
    expect((refused as string[]).slice(0, 2)).toEqual(["thread_busy", "configurable.thread_id"]);
    expect((refused as string[])[2]).toMatch(/^thread "held" is being run by another process \(/);
    const pruned = await pruneThreads(store.saver, { olderThanMs: 0, now: NOW });
    expect([pruned.deleted, pruned.skipped.map((s) => [s.threadId, s.reason])]).toEqual([[], [["held", "busy"]]]);
    expect((await store.rows("held"))[0]).toBe(2);
    await claim.release();
    await deleteThread(store.saver, "held");
    expect((await store.rows("held"))[0]).toBe(0);
  });

  it("prunes old threads of the given statuses, skips and names the one a run of this process holds", async () => {
    const { saver, rows } = await backends[backend]!();
    await seed(saver, "old-done", daysAgo(40), "completed");
    await seed(saver, "old-failed", daysAgo(31), "failed");
    await seed(saver, "old-waiting", daysAgo(60), "awaiting_human");
    await seed(saver, "young-done", daysAgo(29), "completed");
    await archiveThread(saver, "old-done", { now: NOW });
    const options = { olderThanMs: parseDuration("30d"), statuses: ["completed", "failed"] as const, now: NOW };
    const dry = await pruneThreads(saver, { ...options, dryRun: true });
    expect(dry).toEqual({
      matched: [
        { threadId: "old-failed", status: "failed", updatedAt: daysAgo(31) },
        { threadId: "old-done", status: "completed", updatedAt: daysAgo(40) },
      ],
      deleted: [],
      skipped: [],
    });
    expect(await ids(saver, { archived: "include" })).toHaveLength(4);

    // A real run, in this process, on a thread old enough to match.
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    const slow = scriptedTool("work", [async () => (await gate, { x: 1 })]);
    const plan = { steps: [{ id: "a", goal: "A", tool: "work", args: {}, produces: ["x"] }] };
    const h = harness(plan, [slow], { checkpointer: saver, threadId: "running" });
    const running = h.run();
    while (slow.calls.length === 0) await new Promise((r) => setTimeout(r, 1));
    const pruned = await pruneThreads(saver, { olderThanMs: DAY, now: Date.now() + 2 * DAY });
    expect(pruned.deleted.sort()).toEqual(["old-done", "old-failed", "old-waiting", "young-done"]);
    expect(pruned.skipped).toEqual([
      {
        threadId: "running",
        reason: "busy",
        message:
          'thread "running" is already running in this process; wait for that run to finish (or use another ' +
          "thread_id): two runs on one thread would both call every tool",
      },
    ]);
    finish();
    expect((await running).status).toBe("completed");
    expect(await ids(saver, { archived: "include" })).toEqual(["running"]);
    expect(await rows("old-done")).toEqual([0, 0, 0, 0]);
  });

  it("skips a thread that moved on between the look and the delete", async () => {
    const { saver } = await backends[backend]!();
    await seed(saver, "moving", daysAgo(40), "completed");
    const getTuple = saver.getTuple.bind(saver);
    let looks = 0;
    vi.spyOn(saver, "getTuple").mockImplementation(async (config) => {
      // The second look is the one made with the thread held: a run wrote just before it.
      if ((looks += 1) === 2) await seed(saver, "moving", daysAgo(0), "running");
      return getTuple(config);
    });
    const pruned = await pruneThreads(saver, { olderThanMs: parseDuration("30d"), now: NOW });
    expect([pruned.deleted, pruned.skipped]).toEqual([
      [],
      [{ threadId: "moving", reason: "changed", message: 'thread "moving" moved on meanwhile' }],
    ]);
    vi.restoreAllMocks();
    expect(await ids(saver)).toEqual(["moving"]);
  });

  it("prunes nothing in an empty database, and nothing younger than a huge duration", async () => {
    const { saver } = await backends[backend]!();
    expect(await pruneThreads(saver, { olderThanMs: parseDuration("30d"), now: NOW })).toEqual({
      matched: [],
      deleted: [],
      skipped: [],
    });
    await seed(saver, "ancient", "1970-01-02T00:00:00.000Z", "completed");
    const huge = await pruneThreads(saver, { olderThanMs: parseDuration("100000000d"), now: NOW });
    expect(huge.matched).toEqual([]);
    expect(await ids(saver)).toEqual(["ancient"]);
  });
});

describe("thread retention on any other saver", () => {
  it("lists, deletes and prunes, but refuses to archive with unsupported_saver: the marks would not last", async () => {
    const saver = new MemorySaver();
    await seed(saver, "old", daysAgo(40), "completed");
    await seed(saver, "new", daysAgo(1), "completed");
    const refusal = [
      "unsupported_saver",
      "checkpointer",
      "archiving needs LangGraph's SqliteSaver or PostgresSaver, which keep the marks beside the checkpoints; " +
        "this checkpointer (any saver) cannot keep them: delete or prune its threads instead",
    ];
    expect(await failure(archiveThread(saver, "old"))).toEqual(refusal);
    expect(await failure(unarchiveThread(saver, "old"))).toEqual(refusal);
    expect(await failure(listThreads(saver, { archived: "only" }))).toEqual(refusal);
    expect(await ids(saver)).toEqual(["new", "old"]);
    expect((await pruneThreads(saver, { olderThanMs: 30 * DAY, now: NOW })).deleted).toEqual(["old"]);
    await deleteThread(saver, "new");
    expect(await listThreads(saver, { archived: "include" })).toEqual({ threads: [] });
  });
});

describe("retention options", () => {
  it("parses durations and refuses a bad one, naming it", () => {
    expect(["90m", "12h", "30d", "2w", "45s", "0d", " 7d "].map((d) => parseDuration(d))).toEqual([
      5_400_000, 43_200_000, 2_592_000_000, 1_209_600_000, 45_000, 0, 604_800_000,
    ]);
    const refused = ["30", "30y", "-1d", "1.5h", "NaN", "", "9".repeat(20) + "d", "1e3d"].map((d) => {
      try {
        return parseDuration(d, "--older-than");
      } catch (error) {
        return isPlanManagerError(error) && [error.code, error.path, error.message.split(", got ")[1]];
      }
    });
    expect(refused).toEqual(
      ['"30"', '"30y"', '"-1d"', '"1.5h"', '"NaN"', '""', `"${"9".repeat(20)}d"`, '"1e3d"'].map((got) => [
        "invalid_options",
        "--older-than",
        got,
      ]),
    );
    expect(() => parseDuration("x")).toThrow(
      "olderThan must be a whole number and a unit — ms, s, m, h, d or w (e.g. 30d, 12h, 90m) — of at most " +
        '9007199254740991 ms, got "x"',
    );
  });

  it("refuses NaN, a bad status, a bad cursor, a bad page size or a bad thread id, naming the option", async () => {
    const saver = new MemorySaver();
    const calls: (() => Promise<unknown>)[] = [
      () => pruneThreads(saver, { olderThanMs: Number.NaN }),
      () => pruneThreads(saver, { olderThanMs: -1 }),
      () => pruneThreads(saver, { olderThanMs: DAY, now: Number.NaN }),
      () => pruneThreads(saver, { olderThanMs: DAY, statuses: ["done" as never] }),
      () => listThreads(saver, { cursor: "not-ours" }),
      () => listThreads(saver, { limit: 0 }),
      () => listThreads(saver, { archived: "yes" as never }),
      () => deleteThread(saver, "" as never),
      () => deleteThread(saver, 7 as never),
    ];
    const reasons = [];
    for (const call of calls) reasons.push(await failure(call()));
    expect(reasons).toEqual([
      ["invalid_options", "olderThanMs", "olderThanMs must be a whole number of milliseconds ≥ 0, got NaN"],
      ["invalid_options", "olderThanMs", "olderThanMs must be a whole number of milliseconds ≥ 0, got -1"],
      ["invalid_options", "now", "now must be epoch milliseconds, got NaN"],
      [
        "invalid_options",
        "statuses",
        'unknown run status "done": choose from planning, awaiting_review, running, awaiting_human, completed, ' +
          "partial, failed, aborted, stopped",
      ],
      ["invalid_options", "cursor", "cursor must be the nextCursor of an earlier page, got not-ours"],
      ["invalid_options", "limit", "limit must be a whole number ≥ 1, got 0"],
      ["invalid_options", "archived", 'archived must be "exclude", "only" or "include", got yes'],
      ["invalid_options", "threadId", 'threadId must be a non-empty string, got ""'],
      ["invalid_options", "threadId", 'threadId must be a non-empty string, got "7"'],
    ]);
  });
});
