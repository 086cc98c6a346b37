/**
 * The one place that reads LangGraph's `SqliteSaver` and `PostgresSaver` tables directly
 * (docs/decisions/0023-state-loads.md). Delta channels are rebuilt on every load by
 * `getDeltaChannelHistory`; the base class walks the thread with one `getTuple` per ancestor (all
 * of its blobs and writes, one query or round trip each), so a load costs the thread's length
 * times a query. The base class invites savers "with direct storage access" to override it, as
 * `MemorySaver` does; these two do not (yet: it belongs upstream). Here the same history is read
 * with one query: the parent chain, the nearest stored seed of each wanted channel, and only the
 * wanted channels' writes.
 *
 * The user's saver is not changed: `withDirectHistory` returns a view that inherits everything from
 * it and answers `getDeltaChannelHistory` itself (the same view for the same saver, so the thread
 * lock still sees one checkpointer). A saver that overrides the method or the storage, or that is
 * neither of the two, is used as it is. What this relies on in the savers (tables, columns, how
 * values are serialised, the fields read) is pinned by test/graph/saver-history.test.ts, which
 * fails by name if an upgrade changes it.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph";

/** One channel's replay, the shape of LangGraph's `DeltaChannelHistory`. */
export interface ChannelHistory {
  seed?: unknown;
  writes: [string, string, unknown][];
}
export type History = Record<string, ChannelHistory>;
/** A stored write or a stored whole value (`seed`); `depth` 1 is the target checkpoint's parent. */
export interface HistoryRow {
  kind: "write" | "seed";
  depth: number;
  taskId: string;
  channel: string;
  value: unknown;
}

type HistoryOptions = Parameters<BaseCheckpointSaver["getDeltaChannelHistory"]>[0];
type Serde = BaseCheckpointSaver["serde"];

/** What is read off a `SqliteSaver` (better-sqlite3's `Database`, its public `db`). */
interface SqliteFields {
  db: { prepare(sql: string): { all(params: Record<string, unknown>): unknown[] } };
  setup(): void;
}
/** What is read off a `PostgresSaver` (private in its typings: pinned by the test). */
interface PostgresFields {
  pool: { query(sql: string, values: unknown[]): Promise<{ rows: unknown[] }> };
  options: { schema: string };
  _dumpBlobs(t: string, ns: string, values: unknown, versions: unknown): Promise<unknown[][]>;
  _dumpCheckpoint(checkpoint: unknown): unknown;
  _dumpMetadata(metadata: unknown): Promise<unknown>;
  _dumpWrites(t: string, ns: string, id: string, taskId: string, writes: [string, unknown][]): Promise<unknown[][]>;
}

const views = new WeakMap<BaseCheckpointSaver, BaseCheckpointSaver>();
const originals = new WeakMap<object, BaseCheckpointSaver>();
const baseWalk = BaseCheckpointSaver.prototype.getDeltaChannelHistory;

/** The saver to run with: a view of `saver` that reads and writes in one query when it is SQLite or PostgreSQL. */
export function withDirectHistory<S>(saver: S): S {
  if (!(saver instanceof BaseCheckpointSaver) || originals.has(saver)) return saver;
  const known = views.get(saver);
  if (known) return known as S;
  const methods = methodsFor(saver);
  if (!methods) return saver;
  const view = Object.create(saver) as BaseCheckpointSaver;
  for (const [name, method] of Object.entries(methods))
    Object.defineProperty(view, name, { value: (...args: never[]) => method(view, ...args) });
  views.set(saver, view);
  originals.set(view, saver);
  return view as S;
}

/** The saver the caller passed, for a view made by `withDirectHistory` (anything else as it is). */
export function originalSaver<T>(saver: T): T {
  return (typeof saver === "object" && saver !== null ? (originals.get(saver) as T | undefined) : undefined) ?? saver;
}

type Method = (saver: BaseCheckpointSaver, ...args: never[]) => Promise<unknown>;

function methodsFor(saver: BaseCheckpointSaver): Record<string, Method> | undefined {
  if (saver.getDeltaChannelHistory !== baseWalk) return undefined;
  const fields = saver as unknown as Partial<SqliteFields & PostgresFields>;
  if (storesAs(saver, "SqliteSaver") && typeof fields.db?.prepare === "function")
    return { getDeltaChannelHistory: sqliteHistory };
  if (storesAs(saver, "PostgresSaver") && typeof fields.pool?.query === "function" && fields.options?.schema)
    return { getDeltaChannelHistory: postgresHistory, put: postgresPut, putWrites: postgresPutWrites };
  return undefined;
}

/** `saver` is an instance of the class named `name` whose storage methods no subclass replaced. */
function storesAs(saver: BaseCheckpointSaver, name: string): boolean {
  for (let proto = Object.getPrototypeOf(saver); proto; proto = Object.getPrototypeOf(proto)) {
    if (proto.constructor?.name !== name) continue;
    return saver.getTuple === proto.getTuple && saver.put === proto.put && saver.putWrites === proto.putWrites;
  }
  return false;
}

/**
 * The base walk's result from rows: for each channel, its nearest seed (smallest depth) and its
 * writes from the target's parent back to the seed's checkpoint included (to the root when there is
 * none), oldest checkpoint first and, within one, in the order the rows came (the saver's own).
 */
export function assembleHistory(channels: string[], rows: HistoryRow[]): History {
  const seedDepth = new Map<string, number>();
  const result: History = Object.fromEntries(channels.map((c) => [c, { writes: [] }]));
  for (const row of rows) {
    if (row.kind !== "seed" || (seedDepth.get(row.channel) ?? Infinity) <= row.depth) continue;
    seedDepth.set(row.channel, row.depth);
    result[row.channel]!.seed = row.value;
  }
  const writes = rows.filter((r) => r.kind === "write" && r.depth <= (seedDepth.get(r.channel) ?? Infinity));
  const ordered = writes.map((w, i) => ({ w, i })).sort((a, b) => b.w.depth - a.w.depth || a.i - b.i);
  for (const { w } of ordered) result[w.channel]?.writes.push([w.taskId, w.channel, w.value]);
  return result;
}

function target(config: RunnableConfig) {
  const c = config.configurable ?? {};
  return {
    t: String(c.thread_id),
    ns: typeof c.checkpoint_ns === "string" ? c.checkpoint_ns : "",
    id: typeof c.checkpoint_id === "string" ? c.checkpoint_id : null,
  };
}

// CROSS JOIN keeps the chain the outer loop, so each checkpoint and its writes are primary-key
// lookups (SQLite's planner otherwise scanned the thread's checkpoints for every link).
const SQLITE_HISTORY = `
WITH RECURSIVE chain(id, depth) AS (
  SELECT parent_checkpoint_id, 1 FROM checkpoints
  WHERE thread_id = @t AND checkpoint_ns = @ns AND checkpoint_id = COALESCE(@id,
    (SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = @t AND checkpoint_ns = @ns))
  UNION ALL
  SELECT c.parent_checkpoint_id, chain.depth + 1 FROM chain CROSS JOIN checkpoints c
  WHERE c.thread_id = @t AND c.checkpoint_ns = @ns AND c.checkpoint_id = chain.id
), wanted(name) AS (SELECT value FROM json_each(@channels))
SELECT 'write' AS kind, chain.depth, w.task_id AS taskId, w.idx, w.channel, w.type, CAST(w.value AS TEXT) AS value
FROM chain CROSS JOIN writes w
WHERE w.thread_id = @t AND w.checkpoint_ns = @ns AND w.checkpoint_id = chain.id AND w.channel IN wanted
UNION ALL
SELECT 'seed', chain.depth, '', 0, v.key, c.type, CAST(c.checkpoint AS TEXT) -> '$.channel_values' -> v.key
FROM chain CROSS JOIN checkpoints c CROSS JOIN json_each(CAST(c.checkpoint AS TEXT), '$.channel_values') v
WHERE c.thread_id = @t AND c.checkpoint_ns = @ns AND c.checkpoint_id = chain.id AND v.key IN wanted
ORDER BY 2 DESC, 3, 4, 1`;

interface StoredRow {
  kind: "write" | "seed";
  depth: number;
  taskId: string;
  channel: string;
  type: string | null;
  value: string | Uint8Array | null;
}

// SqliteSaver stores a checkpoint as one JSON document (values inline) and each write as text.
async function sqliteHistory(saver: BaseCheckpointSaver, { config, channels }: HistoryOptions) {
  if (channels.length === 0) return {};
  const s = saver as unknown as SqliteFields;
  s.setup();
  const sql = SQLITE_HISTORY.replace(/\s+/g, " ");
  const rows = s.db.prepare(sql).all({ ...target(config), channels: JSON.stringify(channels) }) as StoredRow[];
  return assembleHistory(channels, await revive(saver.serde, rows, true));
}

// Every join is a LATERAL lookup by primary key, kept apart by OFFSET 0: without statistics on a
// fresh thread's tables the planner otherwise picks nested scans (measured: 8.8 s at 200 steps).
const postgresSql = (schema: string) => `
WITH RECURSIVE chain(id, depth) AS (
  SELECT parent_checkpoint_id, 1 FROM "${schema}".checkpoints
  WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = COALESCE($3::text,
    (SELECT MAX(checkpoint_id) FROM "${schema}".checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2))
  UNION ALL
  SELECT c.parent_checkpoint_id, chain.depth + 1 FROM chain CROSS JOIN LATERAL (
    SELECT parent_checkpoint_id FROM "${schema}".checkpoints
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = chain.id OFFSET 0) c
), versions AS MATERIALIZED (
  SELECT chain.depth, v.key, v.value FROM chain CROSS JOIN LATERAL (
    SELECT checkpoint FROM "${schema}".checkpoints
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = chain.id OFFSET 0) c
  CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') v
  WHERE v.key = ANY($4)
)
SELECT 'write' AS kind, chain.depth, w.task_id AS "taskId", w.channel, w.type, w.blob AS value, w.idx
FROM chain CROSS JOIN LATERAL (
  SELECT task_id, idx, channel, type, blob FROM "${schema}".checkpoint_writes
  WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = chain.id AND channel = ANY($4) OFFSET 0) w
UNION ALL
SELECT 'seed', versions.depth, '', b.channel, b.type, b.blob, 0
FROM versions CROSS JOIN LATERAL (
  SELECT channel, type, blob FROM "${schema}".checkpoint_blobs
  WHERE thread_id = $1 AND checkpoint_ns = $2 AND channel = versions.key AND version = versions.value
    AND type <> 'empty' OFFSET 0) b
ORDER BY 2 DESC, 3, 7, 1`;

// PostgresSaver stores a checkpoint's values as one blob per channel version ("empty": none).
async function postgresHistory(saver: BaseCheckpointSaver, { config, channels }: HistoryOptions) {
  if (channels.length === 0) return {};
  const s = saver as unknown as PostgresFields;
  const { t, ns, id } = target(config);
  const { rows } = await s.pool.query(postgresSql(s.options.schema), [t, ns, id, channels]);
  return assembleHistory(channels, await revive(saver.serde, rows as StoredRow[], false));
}

/** The serializer every saver gets unless the caller passes one (LangGraph's `JsonPlusSerializer`). */
const defaultSerde = new MemorySaver().serde;
const decoder = new TextDecoder();

/**
 * A stored value as the saver's own `getTuple` deserialises it. LangGraph's default serializer
 * revives `lc` records (snapshots, sets, maps, messages) in an async walk over every node, which
 * costs ~40 times a plain `JSON.parse` (measured: 21 ms against 0.6 ms for a 200-step thread's 397
 * writes); text without an `"lc"` key holds no such record, so it parses to the same value directly.
 */
async function load(serde: Serde, type: string, raw: string | Uint8Array): Promise<unknown> {
  const plain =
    type === "json" && serde.constructor === defaultSerde.constructor && serde.loadsTyped === defaultSerde.loadsTyped;
  if (!plain) return serde.loadsTyped(type, raw);
  const text = typeof raw === "string" ? raw : decoder.decode(raw);
  return text.includes('"lc"') ? serde.loadsTyped(type, text) : JSON.parse(text);
}

/** Every row's value deserialised; a seed from SQLite is JSON text cut out of its checkpoint. */
async function revive(serde: Serde, rows: StoredRow[], wrapped: boolean) {
  const out: HistoryRow[] = [];
  for (const r of rows) {
    const type = r.type ?? "json";
    const raw = r.value ?? "";
    const value =
      r.kind === "seed" && wrapped
        ? ((await load(serde, type, `{"v":${String(raw)}}`)) as { v: unknown }).v
        : await load(serde, type, raw);
    out.push({ kind: r.kind, depth: Number(r.depth), taskId: r.taskId, channel: r.channel, value });
  }
  return out;
}

/** `VALUES ($1, $2), ($3, $4)` for rows of equal length, and their parameters in order. */
function values(rows: unknown[][], from = 1) {
  let n = from;
  const sql = rows.map((r) => `(${r.map(() => `$${n++}`).join(", ")})`).join(", ");
  return { sql, params: rows.flat() };
}

type PutArgs = Parameters<BaseCheckpointSaver["put"]>;

/**
 * PostgresSaver's `put` in one statement: the same rows, serialised by the saver's own methods, but
 * its blobs in one multi-row insert beside the checkpoint's instead of a round trip each inside a
 * transaction (one statement is atomic on its own).
 */
async function postgresPut(saver: BaseCheckpointSaver, ...[config, checkpoint, metadata, versions]: PutArgs) {
  const s = saver as unknown as PostgresFields;
  const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
  if (config.configurable === undefined) throw new Error('Missing "configurable" field in "config" param');
  const [blobs, meta] = await Promise.all([
    s._dumpBlobs(thread_id, checkpoint_ns, checkpoint.channel_values, versions),
    s._dumpMetadata(metadata),
  ]);
  const schema = `"${s.options.schema}"`;
  const row = [thread_id, checkpoint_ns, checkpoint.id, checkpoint_id, s._dumpCheckpoint(checkpoint), meta];
  const cp = values([row]);
  const b = values(
    blobs.map((r) => r.map((v) => v ?? null)),
    row.length + 1,
  );
  const insertBlobs = blobs.length
    ? `WITH blobs AS (INSERT INTO ${schema}.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
       VALUES ${b.sql} ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING) `
    : "";
  await s.pool.query(
    `${insertBlobs}INSERT INTO ${schema}.checkpoints
       (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) VALUES ${cp.sql}
     ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
     DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`,
    [...cp.params, ...(blobs.length ? b.params : [])],
  );
  return { configurable: { thread_id, checkpoint_ns, checkpoint_id: checkpoint.id } };
}

type PutWritesArgs = Parameters<BaseCheckpointSaver["putWrites"]>;

/** PostgresSaver's `putWrites` as one multi-row insert (its own upsert rule: special writes replace). */
async function postgresPutWrites(saver: BaseCheckpointSaver, ...[config, writes, taskId]: PutWritesArgs) {
  const s = saver as unknown as PostgresFields;
  const c = config.configurable ?? {};
  const rows = await s._dumpWrites(c.thread_id, c.checkpoint_ns, c.checkpoint_id, taskId, writes);
  if (rows.length === 0) return;
  const keys = new Set(rows.map((r) => String(r[4])));
  // One statement cannot upsert a row twice: such a batch goes through the saver's own loop.
  if (keys.size < rows.length) return originalSaver(saver).putWrites(config, writes, taskId);
  // The saver's rule: a batch of special writes (errors, interrupts, resumes: negative idx) replaces.
  const special = rows.every((r) => Number(r[4]) < 0);
  const v = values(rows);
  await s.pool.query(
    `INSERT INTO "${s.options.schema}".checkpoint_writes
       (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) VALUES ${v.sql}
     ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO ${
       special ? "UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob" : "NOTHING"
     }`,
    v.params,
  );
}
