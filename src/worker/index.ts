/**
 * `langgraph-replan/worker`: many processes on one PostgreSQL (docs/architecture.md "What runs where", README "Scaling
 * out").
 */
export { createWorker } from "./create-worker.js";
export type { Worker, WorkerOptions } from "./create-worker.js";
export { enqueueRun, enqueueResume, openQueue, DEFAULT_QUEUE } from "./queue.js";
export type { QueueClient, QueueOptions, ThreadFinished, ThreadJob } from "./queue.js";
export { requestStop, reopenStopped, resumeStopped } from "./stop.js";
export type { StoppableGraph } from "./stop.js";
// Thread retention works on any saver (archiving on SQLite and PostgreSQL); the root has no room for it.
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
