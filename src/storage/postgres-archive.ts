/**
 * Archive marks in PostgreSQL (storage/archive-store.ts): a table in the saver's schema, created
 * on first use, read by primary key. Every value is a bound parameter.
 */
import { ARCHIVE_TABLE, type ArchiveStore } from "./archive-store.js";
import type { PostgresSaverHandle } from "./langgraph-savers.js";
import { createOnFirstUse } from "./postgres-ddl.js";

export function postgresArchive(handle: Pick<PostgresSaverHandle, "query" | "schema">): ArchiveStore {
  const table = `"${handle.schema}".${ARCHIVE_TABLE}`;
  const ensure = createOnFirstUse(
    (sql) => handle.query(sql),
    `CREATE TABLE IF NOT EXISTS ${table} (thread_id text PRIMARY KEY, archived_at bigint NOT NULL)`,
  );
  return {
    async mark(threadId, at) {
      await ensure();
      await handle.query(`INSERT INTO ${table} (thread_id, archived_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
        threadId,
        at,
      ]);
    },
    async unmark(threadId) {
      await ensure();
      const { rows } = await handle.query(`DELETE FROM ${table} WHERE thread_id = $1 RETURNING thread_id`, [threadId]);
      return rows.length > 0;
    },
    async marked(threadIds) {
      if (threadIds.length === 0) return new Set();
      await ensure();
      const { rows } = await handle.query(`SELECT thread_id FROM ${table} WHERE thread_id = ANY($1::text[])`, [
        [...threadIds],
      ]);
      return new Set(rows.map((r) => String(r.thread_id)));
    },
  };
}
