/**
 * The effect journal in PostgreSQL (storage/journal.ts): one table in the saver's schema, written
 * through the saver's own pool; each statement commits on its own, so an intent is durable before the
 * call goes out.
 */
import { entryOf, JOURNAL_TABLE, type EffectJournal, type StoredEntry } from "./journal.js";
import type { PgPool } from "./langgraph-savers.js";
import { createOnFirstUse } from "./postgres-ddl.js";

export function postgresJournal(query: PgPool["query"], schema: string): EffectJournal {
  const table = `"${schema.replaceAll('"', '""')}".${JOURNAL_TABLE}`;
  const ready = createOnFirstUse(
    (sql) => query(sql),
    `CREATE TABLE IF NOT EXISTS ${table} (thread_id TEXT NOT NULL, key TEXT NOT NULL, step_id TEXT NOT NULL, ` +
      "tool TEXT NOT NULL, args TEXT NOT NULL, attempt INTEGER NOT NULL, at TEXT NOT NULL, result TEXT, " +
      "PRIMARY KEY (thread_id, key))",
  );
  return {
    async intent(threadId, i) {
      await ready();
      await query(
        `INSERT INTO ${table} (thread_id, key, step_id, tool, args, attempt, at, result) ` +
          "VALUES ($1, $2, $3, $4, $5, $6, $7, NULL) ON CONFLICT (thread_id, key) DO UPDATE SET " +
          "step_id = EXCLUDED.step_id, tool = EXCLUDED.tool, args = EXCLUDED.args, attempt = EXCLUDED.attempt, " +
          "at = EXCLUDED.at, result = NULL",
        [threadId, i.key, i.stepId, i.tool, JSON.stringify(i.args), i.attempt, i.at],
      );
    },
    async result(threadId, key, result) {
      await ready();
      await query(`UPDATE ${table} SET result = $1 WHERE thread_id = $2 AND key = $3`, [
        JSON.stringify(result),
        threadId,
        key,
      ]);
    },
    async lookup(threadId, key) {
      await ready();
      const { rows } = await query(
        `SELECT step_id, tool, args, attempt, at, result FROM ${table} WHERE thread_id = $1 AND key = $2`,
        [threadId, key],
      );
      const row = rows[0] as StoredEntry | undefined;
      return row ? entryOf(key, row) : undefined;
    },
    async deleteThread(threadId) {
      await ready();
      await query(`DELETE FROM ${table} WHERE thread_id = $1`, [threadId]);
    },
    async unsettled(threadId) {
      await ready();
      const { rows } = await query(
        `SELECT key, step_id, tool, args, attempt, at, result FROM ${table} WHERE thread_id = $1 AND result IS NULL`,
        [threadId],
      );
      return (rows as unknown as (StoredEntry & { key: string })[]).map((row) => entryOf(row.key, row));
    },
  };
}
