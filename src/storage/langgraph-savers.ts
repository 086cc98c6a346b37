/**
 * The one file that reads LangGraph's `SqliteSaver` and `PostgresSaver` past their public
 * methods (docs/decisions/0032-saver-adapters.md): their storage handles (`db`, a
 * better-sqlite3 database; `pool`, a pg pool, private in its types), the PostgreSQL schema and
 * SQL, and the PostgreSQL saver's own serialisers (`_dumpBlobs`, `_dumpWrites`, …), so that rows
 * written directly are the rows the saver would write. Savers are recognised by shape — the
 * fields and methods present — never by class name, so any copy of either package works and a
 * subclass that replaced the storage is not mistaken for it. test/unit/saver-seam.test.ts pins
 * every member read here against the installed packages and fails if another file reads one.
 */
import { BaseCheckpointSaver, type CheckpointMetadata } from "@langchain/langgraph";

/** The part of a better-sqlite3 statement the adapters use. */
export interface SqliteStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

/** The part of a better-sqlite3 database the adapters use. */
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

/** The part of a pg pool the adapters use. */
export interface PgPool {
  connect(): Promise<PgClient>;
  query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  on(event: "error", listener: () => void): unknown;
  end(): Promise<void>;
}

type Row = unknown[];

/** What the SQLite adapter reads off a `SqliteSaver`. */
export interface SqliteSaverHandle {
  /** The saver's better-sqlite3 database. */
  database: SqliteDb;
  /** Creates the saver's tables if they are missing (its public `setup`). */
  setup(): void;
  /** The saver stores in LangGraph's own tables with its own methods, so they may be read directly. */
  ownTables: boolean;
}

/** What the PostgreSQL adapter reads off a `PostgresSaver`. */
export interface PostgresSaverHandle {
  /** A query on the saver's own pool, for statements that take no lock. */
  query: PgPool["query"];
  /** A pool beside it for connections that hold a thread's lock for a whole run. */
  lockPool(): PgPool;
  /** The saver's tables and serialisers are LangGraph's own (and `schema` names where they are). */
  ownTables: boolean;
  schema: string;
  /** The saver's own row builders: `[thread, ns, channel, version, type, blob]`. */
  dumpBlobs(thread: string, ns: string, values: unknown, versions: unknown): Promise<Row[]>;
  dumpCheckpoint(checkpoint: unknown): unknown;
  dumpMetadata(metadata: unknown): Promise<unknown>;
  /** `[thread, ns, checkpoint, task, idx, channel, type, blob]`. */
  dumpWrites(thread: string, ns: string, id: string, taskId: string, writes: [string, unknown][]): Promise<Row[]>;
  /** Metadata read from its JSONB column, as the saver's `getTuple` returns it. */
  loadMetadata(stored: unknown): Promise<CheckpointMetadata>;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;
const hasMethods = (value: unknown, ...names: string[]): boolean =>
  isObject(value) && names.every((name) => typeof value[name] === "function");

const baseWalk = BaseCheckpointSaver.prototype.getDeltaChannelHistory;
const STORAGE = ["getTuple", "put", "putWrites", "list"] as const;

/**
 * The saver reads and writes through the class that defines `marker` (a method only that saver
 * class has), with none of its storage methods or its history replaced by a subclass or on the
 * instance: then its tables hold what it reads, and a direct query sees the same.
 */
function ownStorage(saver: BaseCheckpointSaver, marker: string): boolean {
  if (saver.getDeltaChannelHistory !== baseWalk) return false;
  let owner: object | null = saver;
  while (owner && !Object.hasOwn(owner, "getTuple")) owner = Object.getPrototypeOf(owner) as object | null;
  if (!owner || !Object.hasOwn(owner, marker)) return false;
  const defined = owner as Record<string, unknown>;
  return STORAGE.every((name) => Object.hasOwn(defined, name) && saver[name] === defined[name]);
}

/** LangGraph's SQLite saver's handles, when `saver` has its shape. */
export function sqliteSaverHandle(saver: BaseCheckpointSaver): SqliteSaverHandle | undefined {
  const fields = saver as unknown as Record<string, unknown>;
  if (!hasMethods(fields.db, "prepare", "exec", "transaction")) return undefined;
  const setup = typeof fields.setup === "function" ? () => void (fields.setup as () => void).call(saver) : () => {};
  return {
    database: fields.db as SqliteDb,
    setup,
    ownTables: typeof fields.setup === "function" && ownStorage(saver, "migratePendingSends"),
  };
}

/** LangGraph's PostgreSQL saver's handles, when `saver` has its shape. */
export function postgresSaverHandle(saver: BaseCheckpointSaver): PostgresSaverHandle | undefined {
  const fields = saver as unknown as Record<string, unknown>;
  const pool = fields.pool;
  if (!hasMethods(pool, "connect", "query", "on") || !isObject(pool)) return undefined;
  const options = isObject(fields.options) ? fields.options : {};
  const schema = typeof options.schema === "string" ? options.schema : "public";
  const upsert = isObject(fields.SQL_STATEMENTS) ? fields.SQL_STATEMENTS.UPSERT_CHECKPOINTS_SQL : undefined;
  // The saver's own SQL names the tables a direct query reads: a saver writing elsewhere is not read.
  const ownTables =
    ownStorage(saver, "_dumpBlobs") &&
    hasMethods(saver, "_dumpBlobs", "_dumpCheckpoint", "_dumpMetadata", "_dumpWrites", "_loadMetadata") &&
    typeof upsert === "string" &&
    upsert.includes(`"${schema}".checkpoints `);
  const s = saver as unknown as {
    _dumpBlobs: PostgresSaverHandle["dumpBlobs"];
    _dumpCheckpoint: PostgresSaverHandle["dumpCheckpoint"];
    _dumpMetadata: PostgresSaverHandle["dumpMetadata"];
    _dumpWrites: PostgresSaverHandle["dumpWrites"];
    _loadMetadata: PostgresSaverHandle["loadMetadata"];
  };
  return {
    query: (sql, params) => (pool as unknown as PgPool).query(sql, params),
    lockPool: () => lockPoolFor(pool),
    ownTables,
    schema,
    dumpBlobs: (...args) => s._dumpBlobs(...args),
    dumpCheckpoint: (checkpoint) => s._dumpCheckpoint(checkpoint),
    dumpMetadata: (metadata) => s._dumpMetadata(metadata),
    dumpWrites: (...args) => s._dumpWrites(...args),
    loadMetadata: (stored) => s._loadMetadata(stored),
  };
}

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
