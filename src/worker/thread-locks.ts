/**
 * One worker per thread, across processes: a PostgreSQL session advisory lock per thread, held on
 * its own connection for as long as a worker drives the thread. The queue's lease alone cannot
 * promise it (a run that outlasts its lease is handed out again while it still runs); the lock
 * can, and PostgreSQL frees it the moment the holder's connection drops, so a killed worker's
 * thread is free as soon as its job comes back.
 *
 * Operators' stop requests for threads a worker is running wait in a small table beside the
 * locks; each insert notifies the workers (`LISTEN`), which mark the row noticed and stop the
 * thread at its next step boundary (worker/stop-watch.ts).
 */
import { Pool, type PoolClient } from "pg";
import { tryAdvisoryLock } from "../storage/advisory-lock.js";

/** Two-key advisory locks: the first key keeps this library's locks apart from the application's. */
const LOCK_SPACE = "langgraph-replan";

export const STOP_TABLE = "langgraph_replan_stop_requests";
/** The `NOTIFY` channel a stop request is announced on; the payload is the thread id. */
export const STOP_CHANNEL = "langgraph_replan_stop";

/** A pending stop request: why, and whether the worker running the thread has seen it. */
export interface PendingStop {
  reason?: string;
  noticed: boolean;
}

export interface ThreadLock {
  release(): Promise<void>;
}

export interface ThreadLocks {
  /** The thread's lock, or undefined when another session holds it. */
  tryLock(threadId: string): Promise<ThreadLock | undefined>;
  /** Records an operator's stop request for the worker holding the thread. */
  addStopRequest(threadId: string, reason?: string): Promise<void>;
  /** The pending stop request for a thread, if any. */
  stopRequest(threadId: string): Promise<PendingStop | undefined>;
  /** The pending stop requests among these threads, by thread id. */
  stopRequests(threadIds: string[]): Promise<Map<string, PendingStop>>;
  /** Marks a thread's stop request as seen by the worker running it. */
  noticeStop(threadId: string): Promise<void>;
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
  await serialized(async (client) => {
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${STOP_TABLE} ` +
        `(thread_id text PRIMARY KEY, reason text, requested_at timestamptz NOT NULL DEFAULT now())`,
    );
    // Tables made before stop requests were announced have no such column.
    await client.query(`ALTER TABLE ${STOP_TABLE} ADD COLUMN IF NOT EXISTS noticed_at timestamptz`);
  });
  const requests = async (threadIds: string[]) => {
    const { rows } = await pool.query<{ thread_id: string; reason: string | null; noticed: boolean }>(
      `SELECT thread_id, reason, noticed_at IS NOT NULL AS noticed FROM ${STOP_TABLE} WHERE thread_id = ANY($1)`,
      [threadIds],
    );
    return new Map(
      rows.map((r) => [r.thread_id, { ...(r.reason ? { reason: r.reason } : {}), noticed: r.noticed }] as const),
    );
  };
  return {
    serialized,
    tryLock: (threadId) => tryAdvisoryLock(pool, LOCK_SPACE, threadId),
    async addStopRequest(threadId, reason) {
      // One statement, so the notification goes out with the row (NOTIFY is sent at commit).
      await pool.query(
        `WITH saved AS (INSERT INTO ${STOP_TABLE} (thread_id, reason) VALUES ($1, $2) ` +
          `ON CONFLICT (thread_id) DO UPDATE SET reason = $2, noticed_at = NULL RETURNING thread_id) ` +
          `SELECT pg_notify('${STOP_CHANNEL}', thread_id) FROM saved`,
        [threadId, reason ?? null],
      );
    },
    stopRequests: requests,
    stopRequest: async (threadId) => (await requests([threadId])).get(threadId),
    async noticeStop(threadId) {
      await pool.query(`UPDATE ${STOP_TABLE} SET noticed_at = now() WHERE thread_id = $1`, [threadId]);
    },
    async clearStopRequest(threadId) {
      await pool.query(`DELETE FROM ${STOP_TABLE} WHERE thread_id = $1`, [threadId]);
    },
    close: () => pool.end(),
  };
}
