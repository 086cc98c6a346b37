/**
 * A run's claim on its thread in a SQLite checkpoint file, for other processes to see: one row
 * per held thread in the saver's own database, written in an immediate transaction (SQLite's
 * write lock makes the check and the write one step). A claim is a lease, renewed while the run
 * lasts; a holder that died (on this host: its pid is gone, the lease notwithstanding; elsewhere:
 * its lease ran out) no longer holds the thread. docs/decisions/0018-one-run-per-thread-across-processes.md.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { SqliteDb } from "./langgraph-savers.js";

export const CLAIMS_TABLE = "langgraph_replan_thread_claims";
/** How long a claim outlives its last renewal; renewed every third of it. */
export const SQLITE_LEASE_MS = 30_000;

export interface ClaimHolder {
  pid: number;
  host: string;
}

export interface ThreadClaim {
  release(): void;
}

interface ClaimRow extends ClaimHolder {
  token: string;
  expires_at: number;
}

const ready = new WeakSet<object>();

function ensureTable(db: SqliteDb): void {
  if (ready.has(db)) return;
  db.exec(
    `CREATE TABLE IF NOT EXISTS ${CLAIMS_TABLE} (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL, ` +
      "token TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, expires_at INTEGER NOT NULL, " +
      "PRIMARY KEY (thread_id, checkpoint_ns))",
  );
  ready.add(db);
}

/** Whether a process on this host is still there (EPERM: it is, under another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The tokens of the claims this process holds and has not released. */
const heldHere = new Set<string>();

/**
 * A holder on this host holds its claim as long as its process is there, whatever the lease says:
 * the lease is read on the wall clock, which a step forward (NTP) or a stalled event loop would
 * otherwise turn into a live run's thread taken by another. A holder on another host, whose process
 * cannot be asked, holds until its lease ends.
 */
const stillHeld = (row: ClaimRow, now: number): boolean =>
  row.host !== hostname()
    ? row.expires_at > now
    : row.pid === process.pid
      ? // This process's own row: held while one of its claims has it (a row whose release could not delete it is not).
        heldHere.has(row.token)
      : alive(row.pid);

/** Who holds the thread's claim, or undefined when no live process does (a read: nothing is written but the table). */
export function sqliteClaimHolder(
  db: SqliteDb,
  threadId: string,
  namespace: string,
  now: () => number = Date.now,
): ClaimHolder | undefined {
  ensureTable(db);
  const row = db
    .prepare(`SELECT token, pid, host, expires_at FROM ${CLAIMS_TABLE} WHERE thread_id = ? AND checkpoint_ns = ?`)
    .get(threadId, namespace) as ClaimRow | undefined;
  return row && stillHeld(row, now()) ? { pid: row.pid, host: row.host } : undefined;
}

/** Claims the thread, or returns who holds it. `now` is the wall clock (a lease is shared across processes). */
export function claimSqliteThread(
  db: SqliteDb,
  threadId: string,
  namespace: string,
  now: () => number = Date.now,
): ThreadClaim | ClaimHolder {
  ensureTable(db);
  const token = randomUUID();
  const where = "thread_id = ? AND checkpoint_ns = ?";
  const take = db.transaction((): ClaimHolder | undefined => {
    const row = db
      .prepare(`SELECT token, pid, host, expires_at FROM ${CLAIMS_TABLE} WHERE ${where}`)
      .get(threadId, namespace) as ClaimRow | undefined;
    if (row && stillHeld(row, now())) return { pid: row.pid, host: row.host };
    db.prepare(
      `INSERT OR REPLACE INTO ${CLAIMS_TABLE} (thread_id, checkpoint_ns, token, pid, host, expires_at) ` +
        "VALUES (?, ?, ?, ?, ?, ?)",
    ).run(threadId, namespace, token, process.pid, hostname(), now() + SQLITE_LEASE_MS);
    return undefined;
  });
  const holder = take.immediate();
  if (holder) return holder;
  heldHere.add(token);
  const renew = setInterval(() => {
    try {
      db.prepare(`UPDATE ${CLAIMS_TABLE} SET expires_at = ? WHERE ${where} AND token = ?`).run(
        now() + SQLITE_LEASE_MS,
        threadId,
        namespace,
        token,
      );
    } catch {
      // A busy or closed database: the claim lapses with its lease, which is what a dead holder's does.
    }
  }, SQLITE_LEASE_MS / 3);
  renew.unref();
  return {
    release() {
      clearInterval(renew);
      heldHere.delete(token);
      try {
        db.prepare(`DELETE FROM ${CLAIMS_TABLE} WHERE ${where} AND token = ?`).run(threadId, namespace, token);
      } catch {
        // As above: a claim that cannot be deleted expires.
      }
    },
  };
}
