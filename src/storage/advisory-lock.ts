/**
 * A PostgreSQL session advisory lock on a connection of its own, kept out of the pool until
 * released. PostgreSQL frees it the moment the holder's connection drops, so a killed process
 * holds nothing. Used by a run for its thread (graph/process-claim.ts) and by workers for the
 * threads they drive (worker/thread-locks.ts), each in its own lock space.
 */
import type { PgPool } from "./langgraph-savers.js";

export interface AdvisoryLock {
  release(): Promise<void>;
}

/** The lock on `(space, key)`, or undefined when another session holds it. */
export async function tryAdvisoryLock(pool: PgPool, space: string, key: string): Promise<AdvisoryLock | undefined> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query("SELECT pg_try_advisory_lock(hashtext($1), hashtext($2)) AS ok", [space, key]);
    if (rows[0]?.ok !== true) {
      client.release();
      return undefined;
    }
  } catch (error) {
    client.release(error as Error);
    throw error;
  }
  // A connection the server drops while the lock is held (a restart, a terminated backend) frees the
  // lock with it; unheard, its "error" event would crash the process.
  const dropped = () => undefined;
  client.on("error", dropped);
  return {
    async release() {
      try {
        await client.query("SELECT pg_advisory_unlock(hashtext($1), hashtext($2))", [space, key]);
        client.removeListener("error", dropped);
        client.release();
      } catch (error) {
        // Destroying the connection frees the lock too.
        client.removeListener("error", dropped);
        client.release(error as Error);
      }
    },
  };
}

/**
 * Whether some session holds the lock on `(space, key)` in this database, read from `pg_locks`
 * without taking it: a probe that took and released the lock would refuse a run starting meanwhile.
 * A two-key advisory lock shows its keys as `classid` and `objid` (int4 read as oid), `objsubid` 2.
 */
export async function advisoryLockHeld(query: PgPool["query"], space: string, key: string): Promise<boolean> {
  const { rows } = await query(
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 " +
      "AND classid = hashtext($1)::oid AND objid = hashtext($2)::oid " +
      "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) AS held",
    [space, key],
  );
  return rows[0]?.held === true;
}
