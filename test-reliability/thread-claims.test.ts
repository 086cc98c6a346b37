/**
 * One run per thread across processes on PostgreSQL: two real processes answer the same paused
 * thread; one runs it, the other gets `thread_busy`, and the side-effecting tool runs once. A
 * killed holder's advisory lock is freed by the server when its connection drops.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resumeRun } from "../src/index.js";
import { paymentGraph } from "../test/helpers/payment-process.js";
import { answerTwice, calls, start, until } from "../test/helpers/payment-processes.js";
import pg from "pg";
import { tryAdvisoryLock } from "../src/storage/advisory-lock.js";
import { startPostgres, type PgServer } from "./helpers/postgres.js";

let server: PgServer;
const dirs: string[] = [];

beforeAll(async () => {
  server = await startPostgres();
}, 120_000);
afterAll(() => {
  server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A thread paused for the person on `saver`; the directory its tool reports to. */
async function pausedThreadOn(saver: PostgresSaver, thread: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "pg-claims-"));
  dirs.push(dir);
  const out = await paymentGraph(saver, dir).invoke(
    { goal: "pay the vendor" },
    { configurable: { thread_id: thread } },
  );
  expect(out.status).toBe("awaiting_human");
  return dir;
}

async function pausedThread(thread: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "pg-claims-"));
  dirs.push(dir);
  const saver = PostgresSaver.fromConnString(server.url);
  await saver.setup();
  const out = await paymentGraph(saver, dir).invoke(
    { goal: "pay the vendor" },
    { configurable: { thread_id: thread } },
  );
  await saver.end();
  expect(out.status).toBe("awaiting_human");
  return dir;
}

/** A database of its own, and a connection string to it. */
async function freshDatabase(admin: pg.Pool, name: string): Promise<string> {
  await admin.query(`CREATE DATABASE ${name}`);
  return server.url.replace(/\/postgres$/, `/${name}`);
}

/** Runs a thread to its end: a pause for the person, then the payment. */
async function runThread(saver: PostgresSaver, thread: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "pg-claims-"));
  dirs.push(dir);
  writeFileSync(join(dir, "go"), "");
  const graph = paymentGraph(saver, dir);
  const config = { configurable: { thread_id: thread } };
  const paused = await graph.invoke({ goal: "pay the vendor" }, config);
  const done = (await resumeRun(graph, config, { action: "complete", output: {} })) as { status: string };
  return [paused.status, done.status];
}

describe("one run per thread across processes (PostgreSQL)", () => {
  it("one process runs a thread again the moment its last run returned: its own lock is already let go", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pg-claims-"));
    dirs.push(dir);
    writeFileSync(join(dir, "go"), "");
    const saver = PostgresSaver.fromConnString(server.url);
    await saver.setup();
    const graph = paymentGraph(saver, dir);
    const statuses: string[] = [];
    for (let i = 0; i < 10; i++) {
      const config = { configurable: { thread_id: `again-${i}` } };
      statuses.push((await graph.invoke({ goal: "pay the vendor" }, config)).status);
      statuses.push(
        ((await resumeRun(graph, config, { action: "complete", output: {} })) as { status: string }).status,
      );
    }
    await saver.end();
    expect(statuses).toEqual(Array.from({ length: 10 }, () => ["awaiting_human", "completed"]).flat());
  }, 120_000);

  it("two processes answering the same paused thread: one completes, the other gets thread_busy", async () => {
    const dir = await pausedThread("both");
    const { first, second } = await answerTwice(server.url, "both", dir);
    expect(second).toEqual({ line: JSON.stringify({ code: "thread_busy" }), exit: 0 });
    expect(first).toMatchObject({ line: JSON.stringify({ status: "completed" }), exit: 0 });
    expect(calls(dir)).toEqual([String(first.pid)]);
  }, 120_000);

  it("a killed holder's lock goes with its connection: the next process carries the run on", async () => {
    const dir = await pausedThread("killed");
    const holder = start(server.url, "killed", "resume", dir);
    await until(join(dir, "started"));
    holder.kill();
    expect((await holder.done).exit).toBe(null);
    writeFileSync(join(dir, "go"), "");
    const next = start(server.url, "killed", "continue", dir);
    expect(await next.done).toEqual({ line: JSON.stringify({ status: "completed" }), exit: 0 });
    expect(calls(dir)).toEqual([String(holder.pid), String(next.pid)]);
  }, 120_000);

  it("a held lock whose connection the server drops: no crash, the release resolves, the lock is free again", async () => {
    const pool = new pg.Pool({ connectionString: server.url });
    try {
      const lock = await tryAdvisoryLock(pool, "test", "dropped");
      expect(lock).toBeDefined();
      const [held] = (
        await pool.query(
          "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = hashtext('dropped')::oid AND granted",
        )
      ).rows as { pid: number }[];
      // Unheard, the held connection's "error" event would end this process here.
      await pool.query("SELECT pg_terminate_backend($1)", [held!.pid]);
      await new Promise((done) => setTimeout(done, 200));
      await lock!.release();
      const again = await tryAdvisoryLock(pool, "test", "dropped");
      expect(again).toBeDefined();
      await again!.release();
    } finally {
      await pool.end();
    }
  }, 60_000);

  it("after saver.end() no connection of the thread claims is left: DROP DATABASE (no FORCE) succeeds at once", async () => {
    const admin = new pg.Pool({ connectionString: server.url });
    try {
      const url = await freshDatabase(admin, "claims_end");
      const saver = PostgresSaver.fromConnString(url);
      await saver.setup();
      expect(await runThread(saver, "end-1")).toEqual(["awaiting_human", "completed"]);
      await saver.end();
      await admin.query("CREATE DATABASE claims_end_copy TEMPLATE claims_end");
      await admin.query("DROP DATABASE claims_end_copy");
      await admin.query("DROP DATABASE claims_end");
      const { rows } = await admin.query("SELECT count(*)::int AS n FROM pg_database WHERE datname LIKE 'claims_end%'");
      expect(rows).toEqual([{ n: 0 }]);
    } finally {
      await admin.end();
    }
  }, 60_000);

  it("the application's own pool, ended by the application: the claims' connections end with it", async () => {
    const admin = new pg.Pool({ connectionString: server.url });
    try {
      const url = await freshDatabase(admin, "claims_own_pool");
      const pool = new pg.Pool({ connectionString: url });
      const saver = new PostgresSaver(pool);
      await saver.setup();
      expect(await runThread(saver, "own-1")).toEqual(["awaiting_human", "completed"]);
      // Through the callback form as well as the promise: either way, done means closed.
      await new Promise<void>((done, fail) => pool.end((error?: Error) => (error ? fail(error) : done())));
      await admin.query("DROP DATABASE claims_own_pool");
      // The pool is gone: a run on it fails as pg says, and opens nothing.
      const dir = mkdtempSync(join(tmpdir(), "pg-claims-"));
      dirs.push(dir);
      await expect(
        paymentGraph(saver, dir).invoke({ goal: "pay the vendor" }, { configurable: { thread_id: "own-2" } }),
      ).rejects.toThrow("Cannot use a pool after calling end on the pool");
    } finally {
      await admin.end();
    }
  }, 60_000);

  it("saver.end() while a run holds its thread: the claim stays until the run returns, then end() resolves and nothing is left", async () => {
    const admin = new pg.Pool({ connectionString: server.url });
    try {
      const url = await freshDatabase(admin, "claims_in_flight");
      const saver = PostgresSaver.fromConnString(url);
      await saver.setup();
      const dir = await pausedThreadOn(saver, "flight-1");
      const config = { configurable: { thread_id: "flight-1" } };
      const running = resumeRun(paymentGraph(saver, dir), config, { action: "complete", output: {} }).then(
        () => "returned",
        (error: Error) => error.message,
      );
      await until(join(dir, "started"));
      let ended = false;
      const ending = saver.end().then(() => (ended = true));
      const held = async () =>
        (
          await admin.query(
            "SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a USING (pid) " +
              "WHERE l.locktype = 'advisory' AND l.granted AND a.datname = 'claims_in_flight'",
          )
        ).rows[0].n as number;
      // The tool is still running: its thread stays claimed, so no other process can start it again.
      expect([await held(), ended]).toEqual([1, false]);
      writeFileSync(join(dir, "go"), "");
      // The run cannot write its checkpoint any more; it returns, its claim goes, end() resolves.
      expect(await running).toBe("Cannot use a pool after calling end on the pool");
      await ending;
      await admin.query("DROP DATABASE claims_in_flight");
    } finally {
      await admin.end();
    }
  }, 60_000);
});
