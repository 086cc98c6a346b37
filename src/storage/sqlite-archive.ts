/**
 * Archive marks in a SQLite checkpoint file (storage/archive-store.ts): a table beside the
 * checkpoints, created on first use, read by primary key. Every value is a bound parameter.
 */
import { ARCHIVE_TABLE, type ArchiveStore } from "./archive-store.js";
import type { SqliteDb } from "./langgraph-savers.js";

export function sqliteArchive(db: SqliteDb): ArchiveStore {
  let ready = false;
  const ensure = () => {
    if (ready) return;
    db.exec(`CREATE TABLE IF NOT EXISTS ${ARCHIVE_TABLE} (thread_id TEXT PRIMARY KEY, archived_at INTEGER NOT NULL)`);
    ready = true;
  };
  return {
    async mark(threadId, at) {
      ensure();
      db.prepare(`INSERT OR IGNORE INTO ${ARCHIVE_TABLE} (thread_id, archived_at) VALUES (?, ?)`).run(threadId, at);
    },
    async unmark(threadId) {
      ensure();
      return db.prepare(`DELETE FROM ${ARCHIVE_TABLE} WHERE thread_id = ?`).run(threadId).changes > 0;
    },
    async marked(threadIds) {
      if (threadIds.length === 0) return new Set();
      ensure();
      const rows = db
        .prepare(`SELECT thread_id AS id FROM ${ARCHIVE_TABLE} WHERE thread_id IN (SELECT value FROM json_each(?))`)
        .all(JSON.stringify(threadIds)) as { id: string }[];
      return new Set(rows.map((r) => r.id));
    },
  };
}
