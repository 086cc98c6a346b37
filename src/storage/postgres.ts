/**
 * The adapter for LangGraph's `PostgresSaver`: a run's claim is a session advisory lock on a
 * connection of its own (storage/advisory-lock.ts), freed by the server when the holder's
 * connection drops; history is read in one query; `put` and `putWrites` write the saver's own
 * rows in one statement each; threads are listed in one query. A subclass that replaced the
 * saver's storage keeps the claims and gets the rest from its own methods (storage/any-saver.ts).
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { advisoryLockHeld, tryAdvisoryLock } from "./advisory-lock.js";
import { anySaverAdapter } from "./any-saver.js";
import { assembleHistory, revive, target, type HistoryOptions, type StoredRow } from "./thread-history.js";
import { postgresSaverHandle, type PostgresSaverHandle } from "./langgraph-savers.js";
import { postgresJournal } from "./journal-postgres.js";
import { checkListOptions } from "./list-options.js";
import { postgresArchive } from "./postgres-archive.js";
import { postgresStatus } from "./postgres-status.js";
import type { ListThreadsOptions, SaverAdapter, ThreadSummary } from "./saver-adapter.js";

/** The first key of a run's advisory lock: apart from the workers' own locks and the application's. */
export const RUN_LOCK_SPACE = "langgraph-replan.run";

export function postgresAdapter(saver: BaseCheckpointSaver): SaverAdapter | undefined {
  const handle = postgresSaverHandle(saver);
  if (!handle) return undefined;
  const claimThread: SaverAdapter["claimThread"] = async (threadId) => {
    const lock = await tryAdvisoryLock(handle.lockPool(), RUN_LOCK_SPACE, threadId);
    if (lock) return { release: () => lock.release().catch(() => undefined) };
    return { heldBy: "it holds the thread's lock in PostgreSQL" };
  };
  const fallback = anySaverAdapter(saver);
  const journal = postgresJournal(handle.query, handle.schema);
  const own = handle.ownTables;
  const statuses = postgresStatus(handle);
  return {
    name: "PostgreSQL",
    claims: "database",
    claimThread,
    async heldBy(threadId) {
      return (await advisoryLockHeld(handle.query, RUN_LOCK_SPACE, threadId))
        ? "it holds the thread's lock in PostgreSQL"
        : undefined;
    },
    journal,
    direct: own
      ? {
          getDeltaChannelHistory: (o) => history(saver, handle, o),
          put: (...args) => put(handle, ...args),
          putWrites: (...args) => putWrites(saver, handle, ...args),
        }
      : {},
    listThreads: own ? (options) => listThreads(handle, options) : fallback.listThreads,
    archive: postgresArchive(handle),
    statuses,
    async deleteThread(threadId, onlyIf) {
      const claim = await claimThread(threadId);
      if ("heldBy" in claim) return { deleted: false, heldBy: claim.heldBy };
      try {
        if (onlyIf && !(await onlyIf())) return { deleted: false, declined: true };
        await saver.deleteThread(threadId);
        await journal.deleteThread(threadId);
        await statuses.delete(threadId);
      } finally {
        await claim.release();
      }
      return { deleted: true };
    },
  };
}

// Every join is a LATERAL lookup by primary key, kept apart by OFFSET 0: without statistics on a
// fresh thread's tables the planner otherwise picks nested scans (measured: 8.8 s at 200 steps).
const historySql = (schema: string) => `
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
async function history(saver: BaseCheckpointSaver, h: PostgresSaverHandle, { config, channels }: HistoryOptions) {
  if (channels.length === 0) return {};
  const { t, ns, id } = target(config);
  const { rows } = await h.query(historySql(h.schema), [t, ns, id, channels]);
  return assembleHistory(channels, await revive(saver.serde, rows as unknown as StoredRow[], false));
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
async function put(h: PostgresSaverHandle, ...[config, checkpoint, metadata, versions]: PutArgs) {
  const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
  if (config.configurable === undefined) throw new Error('Missing "configurable" field in "config" param');
  const [blobs, meta] = await Promise.all([
    h.dumpBlobs(thread_id, checkpoint_ns, checkpoint.channel_values, versions),
    h.dumpMetadata(metadata),
  ]);
  const schema = `"${h.schema}"`;
  const row = [thread_id, checkpoint_ns, checkpoint.id, checkpoint_id, h.dumpCheckpoint(checkpoint), meta];
  const cp = values([row]);
  const b = values(
    blobs.map((r) => r.map((v) => v ?? null)),
    row.length + 1,
  );
  const insertBlobs = blobs.length
    ? `WITH blobs AS (INSERT INTO ${schema}.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
       VALUES ${b.sql} ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING) `
    : "";
  await h.query(
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
async function putWrites(
  saver: BaseCheckpointSaver,
  h: PostgresSaverHandle,
  ...[config, writes, taskId]: PutWritesArgs
) {
  const c = config.configurable ?? {};
  const rows = await h.dumpWrites(c.thread_id, c.checkpoint_ns, c.checkpoint_id, taskId, writes);
  if (rows.length === 0) return;
  const keys = new Set(rows.map((r) => String(r[4])));
  // One statement cannot upsert a row twice: such a batch goes through the saver's own loop.
  if (keys.size < rows.length) return saver.putWrites(config, writes, taskId);
  // The saver's rule: a batch of special writes (errors, interrupts, resumes: negative idx) replaces.
  const special = rows.every((r) => Number(r[4]) < 0);
  const v = values(rows);
  await h.query(
    `INSERT INTO "${h.schema}".checkpoint_writes
       (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) VALUES ${v.sql}
     ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO ${
       special ? "UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob" : "NOTHING"
     }`,
    v.params,
  );
}

// The latest top-level checkpoint of each thread, newest first; `before` pages on the same ids.
// The page is cut before the checkpoints are joined, so only its rows' metadata is read. A NULL
// limit is no limit.
const threadsSql = (schema: string) => `
WITH page AS MATERIALIZED (
  SELECT thread_id, MAX(checkpoint_id) AS id FROM "${schema}".checkpoints WHERE checkpoint_ns = ''
  GROUP BY thread_id HAVING $1::text IS NULL OR MAX(checkpoint_id) < $1
  ORDER BY 2 DESC, 1 LIMIT $2)
SELECT page.thread_id AS "threadId", page.id AS "checkpointId", c.metadata FROM page
CROSS JOIN LATERAL (SELECT metadata FROM "${schema}".checkpoints
  WHERE thread_id = page.thread_id AND checkpoint_ns = '' AND checkpoint_id = page.id OFFSET 0) c
ORDER BY page.id DESC, page.thread_id`;

async function listThreads(h: PostgresSaverHandle, options: ListThreadsOptions = {}): Promise<ThreadSummary[]> {
  const { limit, before } = checkListOptions(options);
  const { rows } = await h.query(threadsSql(h.schema), [before ?? null, limit ?? null]);
  const out: ThreadSummary[] = [];
  for (const r of rows)
    out.push({
      threadId: String(r.threadId),
      checkpointId: String(r.checkpointId),
      metadata: r.metadata == null ? undefined : await h.loadMetadata(r.metadata),
    });
  return out;
}
