/**
 * Status rows in PostgreSQL (storage/status-store.ts): a table in the saver's schema, created on
 * first use, read by primary key. Every value is a bound parameter.
 */
import { STATUS_TABLE, type StatusStore } from "./status-store.js";
import type { PostgresSaverHandle } from "./langgraph-savers.js";
import { createOnFirstUse } from "./postgres-ddl.js";

export function postgresStatus(handle: Pick<PostgresSaverHandle, "query" | "schema">): StatusStore {
  const table = `"${handle.schema}".${STATUS_TABLE}`;
  const ensure = createOnFirstUse(
    (sql) => handle.query(sql),
    `CREATE TABLE IF NOT EXISTS ${table} (thread_id text PRIMARY KEY, checkpoint_id text NOT NULL, summary text NOT NULL)`,
  );
  return {
    async write(threadId, { checkpointId, summary }) {
      await ensure();
      await handle.query(
        `INSERT INTO ${table} AS s (thread_id, checkpoint_id, summary) VALUES ($1, $2, $3)
         ON CONFLICT (thread_id) DO UPDATE SET checkpoint_id = EXCLUDED.checkpoint_id, summary = EXCLUDED.summary
         WHERE EXCLUDED.checkpoint_id >= s.checkpoint_id`,
        [threadId, checkpointId, summary],
      );
    },
    async read(threadIds) {
      if (threadIds.length === 0) return new Map();
      await ensure();
      const { rows } = await handle.query(
        `SELECT thread_id, checkpoint_id, summary FROM ${table} WHERE thread_id = ANY($1::text[])`,
        [[...threadIds]],
      );
      return new Map(
        rows.map((r) => [String(r.thread_id), { checkpointId: String(r.checkpoint_id), summary: String(r.summary) }]),
      );
    },
    async delete(threadId) {
      await ensure();
      await handle.query(`DELETE FROM ${table} WHERE thread_id = $1`, [threadId]);
    },
  };
}
