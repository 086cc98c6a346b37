/**
 * One run per thread across processes on a SQLite checkpoint file: two real processes answer the
 * same paused thread; one runs it, the other gets `thread_busy`, and the side-effecting tool runs
 * once. A killed holder's claim does not keep the thread.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { CLAIMS_TABLE, claimSqliteThread, SQLITE_LEASE_MS, type ThreadClaim } from "../../src/storage/sqlite-claim.js";
import { isPlanManagerError } from "../../src/errors.js";
import { paymentGraph } from "../helpers/payment-process.js";
import { answerTwice, calls, start, until } from "../helpers/payment-processes.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function pausedThread(): Promise<{ db: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "claims-"));
  dirs.push(dir);
  const db = join(dir, "checkpoints.sqlite");
  const saver = SqliteSaver.fromConnString(db);
  const out = await paymentGraph(saver, dir).invoke({ goal: "pay the vendor" }, { configurable: { thread_id: "t" } });
  saver.db.close();
  expect(out.status).toBe("awaiting_human");
  return { db, dir };
}

describe("one run per thread across processes (SQLite)", () => {
  it("two processes answering the same paused thread: one completes, the other gets thread_busy", async () => {
    const { db, dir } = await pausedThread();
    const { first, second } = await answerTwice(db, "t", dir);
    expect(second).toEqual({ line: JSON.stringify({ code: "thread_busy" }), exit: 0 });
    expect(first).toMatchObject({ line: JSON.stringify({ status: "completed" }), exit: 0 });
    expect(calls(dir)).toEqual([String(first.pid)]);
  }, 60_000);

  it("a killed holder does not keep the thread: the next process carries the run on", async () => {
    const { db, dir } = await pausedThread();
    const holder = start(db, "t", "resume", dir);
    await until(join(dir, "started"));
    holder.kill();
    expect((await holder.done).exit).toBe(null);
    writeFileSync(join(dir, "go"), "");
    const next = start(db, "t", "continue", dir);
    expect(await next.done).toEqual({ line: JSON.stringify({ status: "completed" }), exit: 0 });
    expect(calls(dir)).toEqual([String(holder.pid), String(next.pid)]);
  }, 60_000);
});

describe("a payment killed in the call (SQLite, real processes)", () => {
  it("whose API does not honour keys is not paid again by the next process: it is asked about", async () => {
    const { db, dir } = await pausedThread();
    const ignored = { PAYMENT_KEYS: "ignored" };
    const holder = start(db, "t", "resume", dir, ignored);
    await until(join(dir, "started"));
    holder.kill();
    expect((await holder.done).exit).toBe(null);
    writeFileSync(join(dir, "go"), "");
    const next = start(db, "t", "continue", dir, ignored);
    expect(await next.done).toEqual({ line: JSON.stringify({ status: "awaiting_human" }), exit: 0 });
    expect(calls(dir)).toEqual([String(holder.pid)]);
    const saver = SqliteSaver.fromConnString(db);
    const state = await paymentGraph(saver, dir, false).getState({ configurable: { thread_id: "t" } });
    saver.db.close();
    const values = state.values as { decisions: { rule: string }[]; pendingHuman: { options: string[] } };
    expect(values.decisions.at(-1)?.rule).toBe("effect.in-doubt");
    expect(values.pendingHuman.options).toEqual(["happened", "retry", "abort"]);
  }, 60_000);
});

describe("a claim in a SQLite file is a lease", () => {
  const open = () => {
    const saver = SqliteSaver.fromConnString(":memory:");
    (claimSqliteThread(saver.db, "warm", "") as ThreadClaim).release();
    return saver.db;
  };
  const holdFrom = (db: SqliteSaver["db"], expiresAt: number) =>
    db.prepare(`INSERT INTO ${CLAIMS_TABLE} VALUES ('t', '', 'other', 4242, 'elsewhere.example', ?)`).run(expiresAt);

  it("a live claim from another host keeps the thread until its lease runs out", () => {
    const db = open();
    const now = 1_000_000;
    holdFrom(db, now + 1);
    expect(claimSqliteThread(db, "t", "", () => now)).toEqual({ pid: 4242, host: "elsewhere.example" });
    const claim = claimSqliteThread(db, "t", "", () => now + 1);
    expect("release" in claim).toBe(true);
    expect(db.prepare(`SELECT pid, host, expires_at FROM ${CLAIMS_TABLE}`).all()).toEqual([
      { pid: process.pid, host: hostname(), expires_at: now + 1 + SQLITE_LEASE_MS },
    ]);
    db.close();
  });

  it("a run released its claim when it ended, and a second graph on the same file is refused meanwhile", async () => {
    const dir = mkdtempSync(join(tmpdir(), "claims-"));
    dirs.push(dir);
    const db = join(dir, "c.sqlite");
    const saver = SqliteSaver.fromConnString(db);
    await paymentGraph(saver, dir).invoke({ goal: "pay the vendor" }, { configurable: { thread_id: "t" } });
    expect(saver.db.prepare(`SELECT count(*) AS n FROM ${CLAIMS_TABLE}`).get()).toEqual({ n: 0 });
    const other = SqliteSaver.fromConnString(db);
    const held = claimSqliteThread(other.db, "t", "");
    const refused = await paymentGraph(saver, dir)
      .invoke(null, { configurable: { thread_id: "t" } })
      .catch((error: unknown) => error);
    expect(isPlanManagerError(refused) && refused.code).toBe("thread_busy");
    (held as ThreadClaim).release();
    saver.db.close();
    other.db.close();
  });
});
