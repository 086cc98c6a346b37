/**
 * The one place that reads storage handles off LangGraph's own savers, so that a run can hold its
 * thread against other processes (graph/process-claim.ts): `SqliteSaver.db` (a better-sqlite3
 * database, public) and `PostgresSaver.pool` (a pg pool, private in its types). Recognised by
 * shape, not class name, so any copy of either package works; test/graph/saver-handles.test.ts
 * fails if a checkpointer upgrade moves either field.
 */

/** The part of a better-sqlite3 statement a claim uses. */
export interface SqliteStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
}

/** The part of a better-sqlite3 database a claim uses. */
export interface SqliteDb {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): { immediate(...args: A): R };
}

/** The part of a pg client a claim uses. */
export interface PgClient {
  query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  release(error?: Error | boolean): void;
  on(event: "error", listener: (error: Error) => void): unknown;
  removeListener(event: "error", listener: (error: Error) => void): unknown;
}

/** The part of a pg pool a claim uses. */
export interface PgPool {
  connect(): Promise<PgClient>;
  on(event: "error", listener: () => void): unknown;
  end(): Promise<void>;
}

export type SaverStorage = { kind: "sqlite"; db: SqliteDb } | { kind: "postgres"; pool: PgPool } | undefined;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;
const hasMethods = (value: unknown, ...names: string[]): boolean =>
  isObject(value) && names.every((name) => typeof value[name] === "function");

/** Pools of lock connections, one per saver pool: a held lock keeps its connection out of the saver's way. */
const lockPools = new WeakMap<object, PgPool>();

/**
 * A second pool with the saver pool's own settings (its class and its public `options`), for the
 * connections that hold locks: each running thread keeps one for its whole run, and taking them
 * from the saver's pool would leave the saver none once as many threads run as it has connections.
 * Idle lock connections do not keep the process alive, and end when the saver's pool does
 * (endsWith). A pool already ending gets no lock pool: its own `connect` refuses, as pg says.
 */
function lockPoolFor(pool: Record<string, unknown>): PgPool {
  if (pool.ending === true || pool.ended === true) return pool as unknown as PgPool;
  let lockPool = lockPools.get(pool);
  if (!lockPool) {
    const Pool = pool.constructor as new (options: Record<string, unknown>) => PgPool;
    const options = isObject(pool.options) ? pool.options : {};
    lockPool = new Pool({ ...options, max: 100, allowExitOnIdle: true, idleTimeoutMillis: 10_000 });
    // A dropped idle connection must not crash the process; the next query reconnects.
    lockPool.on("error", () => undefined);
    lockPools.set(pool, lockPool);
    endsWith(pool, lockPool);
  }
  return lockPool;
}

/**
 * Makes the saver pool's `end` (what `PostgresSaver.end()` calls, or the application on a pool it
 * owns) end the lock pool too, and finish only once both have: after it, no connection of ours is
 * left, so the database can be dropped or copied at once. pg's pools announce no end, hence the
 * wrapper (an own property of that one pool, not enumerable). A lock held by a run still going
 * stays until the run returns (docs/decisions/0018-one-run-per-thread-across-processes.md), so
 * `end` waits for such runs; their next checkpoint write fails on the ended pool.
 */
function endsWith(pool: Record<string, unknown>, lockPool: PgPool): void {
  const end = pool.end;
  if (typeof end !== "function") return;
  let locksEnded: Promise<void> | undefined;
  const endLocks = () => (locksEnded ??= lockPool.end().catch(() => undefined));
  const wrapped = function (this: unknown, callback?: unknown): unknown {
    if (typeof callback === "function") {
      return end.call(this, (error?: Error) => void endLocks().then(() => callback(error)));
    }
    return Promise.all([end.call(this) as Promise<void>, endLocks()]).then(() => undefined);
  };
  try {
    Object.defineProperty(pool, "end", { value: wrapped, writable: true, configurable: true, enumerable: false });
  } catch {
    // A frozen pool keeps its own `end`; its lock connections still close after 10 s idle.
  }
}

/** Where a saver keeps its rows, when it is one of LangGraph's SQLite or PostgreSQL savers. */
export function saverStorage(saver: object): SaverStorage {
  const fields = saver as Record<string, unknown>;
  if (hasMethods(fields.db, "prepare", "exec", "transaction")) return { kind: "sqlite", db: fields.db as SqliteDb };
  if (hasMethods(fields.pool, "connect", "query", "on") && isObject(fields.pool))
    return { kind: "postgres", pool: lockPoolFor(fields.pool) };
  return undefined;
}
