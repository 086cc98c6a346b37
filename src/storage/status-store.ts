/**
 * Status rows: one per thread, beside the checkpoints, holding a summary of the thread's status as
 * it stood at one checkpoint, so that a reader gets it in one primary-key lookup instead of
 * rebuilding the delta channels (docs/decisions/0037-planning-service-over-mcp.md). A row is
 * written after its checkpoint, so it may lag: a reader uses it only while the checkpoint it names
 * is still the thread's latest, and otherwise reads the checkpoint. The SQLite and PostgreSQL
 * adapters have one (storage/sqlite-status.ts, storage/postgres-status.ts); any other saver none.
 */

/** The table both backends keep the rows in. */
export const STATUS_TABLE = "langgraph_replan_thread_status";

/** A thread's stored summary and the checkpoint it describes. */
export interface StatusRow {
  checkpointId: string;
  /** Opaque to storage: JSON text of what the writer summarised. */
  summary: string;
}

export interface StatusStore {
  /**
   * Stores the summary of the thread at `checkpointId`, unless the row already describes a later
   * checkpoint (ids are time-ordered): a slow writer cannot replace a newer summary with an older one.
   */
  write(threadId: string, row: StatusRow): Promise<void>;
  /** The rows of those of `threadIds` that have one. */
  read(threadIds: readonly string[]): Promise<Map<string, StatusRow>>;
  /** Removes the thread's row (its checkpoints are being deleted). */
  delete(threadId: string): Promise<void>;
}
