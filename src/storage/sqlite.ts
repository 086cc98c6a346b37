/**
 * The adapter for LangGraph's `SqliteSaver`: claims are lease rows in the same file
 * (storage/sqlite-claim.ts), seen by every process that opens it; history is read in one query;
 * threads are listed in one query. A subclass that replaced the saver's storage keeps the claims
 * and gets the rest from its own methods (storage/any-saver.ts).
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { anySaverAdapter } from "./any-saver.js";
import { assembleHistory, revive, target, type HistoryOptions, type StoredRow } from "./thread-history.js";
import { sqliteSaverHandle, type SqliteSaverHandle } from "./langgraph-savers.js";
import { sqliteJournal } from "./journal-sqlite.js";
import { checkListOptions } from "./list-options.js";
import type { ListThreadsOptions, SaverAdapter, ThreadSummary } from "./saver-adapter.js";
import { sqliteArchive } from "./sqlite-archive.js";
import { sqliteStatus } from "./sqlite-status.js";
import { claimSqliteThread, sqliteClaimHolder } from "./sqlite-claim.js";

export function sqliteAdapter(saver: BaseCheckpointSaver): SaverAdapter | undefined {
  const handle = sqliteSaverHandle(saver);
  if (!handle) return undefined;
  const db = handle.database;
  const claimThread: SaverAdapter["claimThread"] = async (threadId) => {
    const claim = claimSqliteThread(db, threadId, "");
    if ("release" in claim) return { release: async () => claim.release() };
    return { heldBy: `pid ${claim.pid} on ${claim.host}` };
  };
  const fallback = anySaverAdapter(saver);
  const journal = sqliteJournal(db);
  const statuses = sqliteStatus(db);
  return {
    name: "SQLite",
    claims: "database",
    claimThread,
    async heldBy(threadId) {
      const holder = sqliteClaimHolder(db, threadId, "");
      return holder && `pid ${holder.pid} on ${holder.host}`;
    },
    journal,
    direct: handle.ownTables ? { getDeltaChannelHistory: (o) => history(saver, handle, o) } : {},
    listThreads: handle.ownTables ? (options) => listThreads(saver, handle, options) : fallback.listThreads,
    archive: sqliteArchive(db),
    statuses,
    async deleteThread(threadId, onlyIf) {
      const claim = await claimThread(threadId);
      if ("heldBy" in claim) return { deleted: false, heldBy: claim.heldBy };
      try {
        if (onlyIf && !(await onlyIf())) return { deleted: false, declined: true };
        handle.setup();
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

// CROSS JOIN keeps the chain the outer loop, so each checkpoint and its writes are primary-key
// lookups (SQLite's planner otherwise scanned the thread's checkpoints for every link).
const HISTORY = `
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
ORDER BY 2 DESC, 3, 4, 1`.replace(/\s+/g, " ");

// SqliteSaver stores a checkpoint as one JSON document (values inline) and each write as text.
async function history(saver: BaseCheckpointSaver, handle: SqliteSaverHandle, { config, channels }: HistoryOptions) {
  if (channels.length === 0) return {};
  handle.setup();
  const rows = handle.database.prepare(HISTORY).all({ ...target(config), channels: JSON.stringify(channels) });
  return assembleHistory(channels, await revive(saver.serde, rows as StoredRow[], true));
}

// The latest top-level checkpoint of each thread: MAX(checkpoint_id) per thread reads the
// primary key's order; `before` pages on the same ids. The page is cut before the checkpoints are
// joined, so only its rows' metadata is read.
const THREADS = `
WITH page(thread_id, id) AS (
  SELECT thread_id, MAX(checkpoint_id) FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id
  HAVING @before IS NULL OR MAX(checkpoint_id) < @before ORDER BY 2 DESC, 1 LIMIT @limit)
SELECT page.thread_id AS threadId, page.id AS checkpointId, c.type, CAST(c.metadata AS TEXT) AS metadata
FROM page CROSS JOIN checkpoints c
WHERE c.thread_id = page.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = page.id
ORDER BY page.id DESC, page.thread_id`.replace(/\s+/g, " ");

interface ThreadRow {
  threadId: string;
  checkpointId: string;
  type: string | null;
  metadata: string | null;
}

async function listThreads(
  saver: BaseCheckpointSaver,
  handle: SqliteSaverHandle,
  options: ListThreadsOptions = {},
): Promise<ThreadSummary[]> {
  const { limit, before } = checkListOptions(options);
  handle.setup();
  const rows = handle.database.prepare(THREADS).all({ before: before ?? null, limit: limit ?? -1 }) as ThreadRow[];
  const out: ThreadSummary[] = [];
  for (const r of rows) {
    const metadata = r.metadata === null ? undefined : await saver.serde.loadsTyped(r.type ?? "json", r.metadata);
    out.push({ threadId: r.threadId, checkpointId: r.checkpointId, metadata });
  }
  return out;
}
