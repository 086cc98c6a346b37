/**
 * `langgraph-replan/worker`: many processes on one PostgreSQL (docs/architecture.md "What runs where",
 * docs/guides/scaling-out.md).
 *
 * @module langgraph-replan/worker
 */
export { createWorker } from "./create-worker.js";
export type { Worker, WorkerOptions } from "./create-worker.js";
export { enqueueRun, enqueueResume, openQueue, DEFAULT_QUEUE } from "./queue.js";
export type { QueueClient, QueueOptions, ThreadFinished, ThreadJob } from "./queue.js";
export { requestStop, reopenStopped, resumeStopped } from "./stop-run.js";
export type { StoppableGraph } from "./stop-run.js";
export { openPlanWakes, PLAN_CHANNEL } from "./plan-wakes.js";
export type { PgPlanWakes } from "./plan-wakes.js";
