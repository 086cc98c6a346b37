/**
 * `langgraph-replan/threads`: a checkpoint store's threads, kept or let go (docs/decisions/0036-thread-retention.md):
 * listed a page at a time, archived, deleted and pruned. Works on any saver (archiving on SQLite and PostgreSQL) and
 * needs neither PostgreSQL's packages nor the workers.
 *
 * @module langgraph-replan/threads
 */
export { archiveThread, deleteThread, listThreads, pruneThreads, unarchiveThread } from "../graph/retention.js";
export type {
  ListedThread,
  PruneCandidate,
  PruneOptions,
  PruneResult,
  PruneSkip,
  ThreadListOptions,
  ThreadPage,
} from "../graph/retention.js";
export { parseDuration } from "../graph/duration.js";
