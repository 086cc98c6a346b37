/**
 * Status rows in a SQLite checkpoint file (storage/status-store.ts): a table beside the
 * checkpoints, created on first use, read by primary key. Every value is a bound parameter.
 */
import { STATUS_TABLE, type StatusRow, type StatusStore } from "./status-store.js";
import type { SqliteDb } from "./langgraph-savers.js";

export function sqliteStatus(db: SqliteDb): StatusStore {
  let ready = false;
  const ensure = () => {
    if (ready) return;
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${STATUS_TABLE} ` +
        "(thread_id TEXT PRIMARY KEY, checkpoint_id TEXT NOT NULL, summary TEXT NOT NULL)",
    );
    ready = true;
  };
  return {
    async write(threadId, { checkpointId, summary }) {
      ensure();
      db.prepare(
        `INSERT INTO ${STATUS_TABLE} (thread_id, checkpoint_id, summary) VALUES (?, ?, ?) ` +
          "ON CONFLICT (thread_id) DO UPDATE SET checkpoint_id = excluded.checkpoint_id, summary = excluded.summary " +
          `WHERE excluded.checkpoint_id >= ${STATUS_TABLE}.checkpoint_id`,
      ).run(threadId, checkpointId, summary);
    },
    async read(threadIds) {
      if (threadIds.length === 0) return new Map();
      ensure();
      const rows = db
        .prepare(
          `SELECT thread_id AS id, checkpoint_id AS checkpointId, summary FROM ${STATUS_TABLE} ` +
            "WHERE thread_id IN (SELECT value FROM json_each(?))",
        )
        .all(JSON.stringify(threadIds)) as (StatusRow & { id: string })[];
      return new Map(rows.map(({ id, checkpointId, summary }) => [id, { checkpointId, summary }]));
    },
    async delete(threadId) {
      ensure();
      db.prepare(`DELETE FROM ${STATUS_TABLE} WHERE thread_id = ?`).run(threadId);
    },
  };
}
