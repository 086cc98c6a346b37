/**
 * Archived threads: a mark beside the checkpoints, in a table of our own in the same database, so
 * that a listing can leave a thread out without deleting anything
 * (docs/decisions/0036-thread-retention.md). The SQLite and PostgreSQL adapters have
 * one (storage/sqlite-archive.ts, storage/postgres-archive.ts); any other saver's storage is opaque
 * to us, so its adapter has none and archiving there is refused with `unsupported_saver`.
 */

/** The table both backends keep the marks in: one row per archived thread. */
export const ARCHIVE_TABLE = "langgraph_replan_archived_threads";

export interface ArchiveStore {
  /** Marks the thread archived at `at` (epoch ms); a thread already marked keeps its first time. */
  mark(threadId: string, at: number): Promise<void>;
  /** Removes the thread's mark; resolves to whether it had one. */
  unmark(threadId: string): Promise<boolean>;
  /** Which of `threadIds` are marked. */
  marked(threadIds: readonly string[]): Promise<Set<string>>;
}
