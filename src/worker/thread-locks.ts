/**
 * One worker per thread, across processes: a PostgreSQL session advisory lock per thread, held on
 * its own connection for as long as a worker drives the thread. The queue's lease alone cannot
 * promise it (a run that outlasts its lease is handed out again while it still runs); the lock
 * can, and PostgreSQL frees it the moment the holder's connection drops, so a killed worker's
 * thread is free as soon as its job comes back.
 *
 * Operators' stop requests for threads a worker is running wait in a small table beside the
 * locks; the worker reads it at each step boundary (worker/driver.ts).
 */
import { Pool, type PoolClient } from "pg";
import { tryAdvisoryLock } from "../graph/advisory-lock.js";

/** Two-key advisory locks: the first key keeps this library's locks apart from the application's. */
const LOCK_SPACE = "langgraph-replan";

export const STOP_TABLE = "langgraph_replan_stop_requests";

export interface ThreadLock {
  release(): Promise<void>;
}

export interface ThreadLocks {
  /** The thread's lock, or undefined when another session holds it. */
  tryLock(threadId: string): Promise<ThreadLock | undefined>;
  /** Records an operator's stop request for the worker holding the thread. */
  addStopRequest(threadId: string, reason?: string): Promise<void>;
  /** The pending stop request for a thread, if any. */
  stopRequest(threadId: string): Promise<{ reason?: string } | undefined>;
  clearStopRequest(threadId: string): Promise<void>;
  /**
   * Runs `fn` while no other process runs one: table creation (`CREATE TABLE IF NOT EXISTS`,
   * `PostgresSaver.setup()`) fails when two processes start at the same moment.
   */
  serialized<T>(fn: (client: PoolClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The second key of the setup lock: thread locks hash their ids, this one is fixed. */
const SETUP_KEY = "setup";

export async function openThreadLocks(connectionString: string, max = 10): Promise<ThreadLocks> {
  const pool = new Pool({ connectionString, max });
  // A dropped idle connection must not crash the process; the next query reconnects.
  pool.on("error", () => undefined);
  const serialized = async <T>(fn: (client: PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    try {
      await client.query("SELECT pg_advisory_lock(hashtext($1), hashtext($2))", [LOCK_SPACE, SETUP_KEY]);
      try {
        return await fn(client);
      } finally {
        await client.query("SELECT pg_advisory_unlock(hashtext($1), hashtext($2))", [LOCK_SPACE, SETUP_KEY]);
      }
    } finally {
      client.release();
    }
  };
  // On the lock's own connection: a pool of one would otherwise wait for itself.
  await serialized((client) =>
    client.query(
      `CREATE TABLE IF NOT EXISTS ${STOP_TABLE} ` +
        `(thread_id text PRIMARY KEY, reason text, requested_at timestamptz NOT NULL DEFAULT now())`,
    ),
  );
  return {
    serialized,
    tryLock: (threadId) => tryAdvisoryLock(pool, LOCK_SPACE, threadId),
    async addStopRequest(threadId, reason) {
      await pool.query(
        `INSERT INTO ${STOP_TABLE} (thread_id, reason) VALUES ($1, $2) ` +
          `ON CONFLICT (thread_id) DO UPDATE SET reason = $2`,
        [threadId, reason ?? null],
      );
    },
    async stopRequest(threadId) {
      const { rows } = await pool.query<{ reason: string | null }>(
        `SELECT reason FROM ${STOP_TABLE} WHERE thread_id = $1`,
        [threadId],
      );
      const row = rows[0];
      return row ? (row.reason ? { reason: row.reason } : {}) : undefined;
    },
    async clearStopRequest(threadId) {
      await pool.query(`DELETE FROM ${STOP_TABLE} WHERE thread_id = $1`, [threadId]);
    },
    close: () => pool.end(),
  };
}
