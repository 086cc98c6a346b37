/**
 * What the plan manager needs from where checkpoints live, behind one interface with one
 * implementation per backend (docs/decisions/0032-saver-adapters.md): LangGraph's SQLite
 * and PostgreSQL savers (storage/sqlite.ts, storage/postgres.ts), and any other
 * `BaseCheckpointSaver` (storage/any-saver.ts), which gets what its public methods allow.
 * storage/index.ts picks the backend by the saver's shape.
 */
import type { BaseCheckpointSaver, CheckpointMetadata } from "@langchain/langgraph";
import type { ArchiveStore } from "./archive-store.js";
import type { EffectJournal } from "./journal.js";
import type { StatusStore } from "./status-store.js";

/** A thread as listed: its latest top-level checkpoint. */
export interface ThreadSummary {
  threadId: string;
  /** The latest checkpoint's id (time-ordered: a later checkpoint has a larger id). */
  checkpointId: string;
  /** That checkpoint's metadata, as the saver's `getTuple` returns it. */
  metadata: CheckpointMetadata | undefined;
}

export interface ListThreadsOptions {
  /** At most this many threads (default: all). */
  limit?: number;
  /** Only threads whose latest checkpoint id is smaller: the last one of the previous page. */
  before?: string;
}

/** A run's claim on its thread; `release` lets the next run have it. */
export interface ThreadClaim {
  release(): Promise<void>;
}

/** The claim was refused: another run holds the thread (`heldBy` says which, for messages). */
export interface ThreadHeld {
  heldBy: string;
}

export type DeleteThreadResult =
  | { deleted: true }
  | { deleted: false; heldBy: string }
  /** The caller's `onlyIf` said no, with the thread held: nothing was deleted. */
  | { deleted: false; declined: true; heldBy?: undefined };

/** The saver methods a backend answers itself, over its tables: one-query history, batched writes. */
export type DirectMethods = Partial<Pick<BaseCheckpointSaver, "getDeltaChannelHistory" | "put" | "putWrites">>;

export interface SaverAdapter {
  /** For messages and tests: "SQLite", "PostgreSQL", or "any saver". */
  readonly name: string;
  /**
   * How far a claim reaches: `"database"`, every process on the same database sees it;
   * `"process"`, only this one (the saver's storage is opaque, so another process is not stopped).
   */
  readonly claims: "database" | "process";
  /** Claims a top-level thread for one run, or says who holds it. */
  claimThread(threadId: string): Promise<ThreadClaim | ThreadHeld>;
  /**
   * Who holds the top-level thread's claim in the database, or undefined when no live process does;
   * read only, so asking never keeps a run from claiming. Always undefined when claims are `"process"`.
   */
  heldBy(threadId: string): Promise<string | undefined>;
  /** Replacements for the saver's own methods that read or write the same rows in fewer queries. */
  readonly direct: DirectMethods;
  /** The threads with a top-level checkpoint, newest first. */
  listThreads(options?: ListThreadsOptions): Promise<ThreadSummary[]>;
  /**
   * Deletes every checkpoint and write of the thread (all namespaces), unless a run holds it in the
   * database. A run of this process is the caller's to rule out (graph/process-claim.ts). `onlyIf`
   * is asked while the thread is held, so what it checks cannot change before the delete.
   */
  deleteThread(threadId: string, onlyIf?: () => Promise<boolean>): Promise<DeleteThreadResult>;
  /** Archive marks in the same database; none for a saver whose storage is opaque (storage/archive-store.ts). */
  readonly archive?: ArchiveStore;
  /** Status rows in the same database, deleted with the thread; none for an opaque saver (storage/status-store.ts). */
  readonly statuses?: StatusStore;
  /** Where side-effecting calls are journaled (storage/journal.ts): the same database, or this process. */
  readonly journal: EffectJournal;
}

/** A backend's adapter for `saver`, when the saver has that backend's shape. */
export type Backend = (saver: BaseCheckpointSaver) => SaverAdapter | undefined;
