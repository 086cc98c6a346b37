/**
 * The effect journal in a SQLite checkpoint file (storage/journal.ts): one table beside the saver's,
 * written synchronously by better-sqlite3, so an intent is on disk before the call goes out.
 */
import { entryOf, JOURNAL_TABLE, type EffectJournal, type StoredEntry } from "./journal.js";
import type { SqliteDb, SqliteStatement } from "./langgraph-savers.js";

export function sqliteJournal(db: SqliteDb): EffectJournal {
  let statements: Record<"intent" | "result" | "lookup" | "delete" | "unsettled", SqliteStatement> | undefined;
  const ready = () => {
    if (statements) return statements;
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${JOURNAL_TABLE} (thread_id TEXT NOT NULL, key TEXT NOT NULL, ` +
        "step_id TEXT NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL, attempt INTEGER NOT NULL, at TEXT NOT NULL, " +
        "result TEXT, PRIMARY KEY (thread_id, key))",
    );
    statements = {
      intent: db.prepare(
        `INSERT OR REPLACE INTO ${JOURNAL_TABLE} (thread_id, key, step_id, tool, args, attempt, at, result) ` +
          "VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
      ),
      result: db.prepare(`UPDATE ${JOURNAL_TABLE} SET result = ? WHERE thread_id = ? AND key = ?`),
      lookup: db.prepare(
        `SELECT step_id, tool, args, attempt, at, result FROM ${JOURNAL_TABLE} WHERE thread_id = ? AND key = ?`,
      ),
      delete: db.prepare(`DELETE FROM ${JOURNAL_TABLE} WHERE thread_id = ?`),
      unsettled: db.prepare(
        `SELECT key, step_id, tool, args, attempt, at, result FROM ${JOURNAL_TABLE} WHERE thread_id = ? AND result IS NULL`,
      ),
    };
    return statements;
  };
  return {
    async intent(threadId, i) {
      ready().intent.run(threadId, i.key, i.stepId, i.tool, JSON.stringify(i.args), i.attempt, i.at);
    },
    async result(threadId, key, result) {
      ready().result.run(JSON.stringify(result), threadId, key);
    },
    async lookup(threadId, key) {
      const row = ready().lookup.get(threadId, key) as StoredEntry | undefined;
      return row ? entryOf(key, row) : undefined;
    },
    async deleteThread(threadId) {
      ready().delete.run(threadId);
    },
    async unsettled(threadId) {
      const rows = ready().unsettled.all(threadId) as (StoredEntry & { key: string })[];
      return rows.map((row) => entryOf(row.key, row));
    },
  };
}
