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
import { tryAdvisoryLock } from "../src/graph/advisory-lock.js";
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
});
