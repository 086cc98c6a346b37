/**
 * The job queue between callers and workers: pg-boss 10 on the same PostgreSQL as the checkpoints
 * (docs/decisions/0010-workers-on-postgres.md). A job names a thread and what to do with it; the
 * thread's state is never in the job, only in the checkpointer.
 */
import PgBoss from "pg-boss";
import { PlanManagerError } from "../errors.js";
import type { PlanManagerInputType } from "../runtime/state.js";
import type { ResumeValue } from "../plan/schema/interrupts.js";
import { openThreadLocks, type ThreadLocks } from "./thread-locks.js";

/** The queue name workers and callers share unless told otherwise. */
export const DEFAULT_QUEUE = "langgraph-replan";

/** What a job asks a worker to do with a thread. */
export type ThreadJob =
  | { kind: "run"; threadId: string; input: PlanManagerInputType }
  /** `interruptId` is the question the value answers: a retried job never answers a later one. */
  | { kind: "resume"; threadId: string; value: ResumeValue; interruptId?: string }
  | { kind: "resume_stopped"; threadId: string };

/** What a worker reports when a thread finishes or pauses (the job's output and the finished queue's message). */
export interface ThreadFinished {
  threadId: string;
  status: string;
  /** True when the thread waits for a person: no worker holds it until `enqueueResume`. */
  parked: boolean;
  outcome?: unknown;
  /** Why the job changed nothing: a resume value that does not answer the pending question. */
  error?: string;
}

/** Options of `openQueue`, `enqueueRun` and `enqueueResume`: the queue's name. */
export interface QueueOptions {
  /** Queue name (default "langgraph-replan"); the finished reports go to `<queue>.finished`. */
  queue?: string;
  /**
   * Seconds a worker may hold a job before another may take it (default 120): the time from a
   * worker's death to its thread running again. Workers hand a long run back at a step boundary
   * before then; a single step that outlasts it keeps its thread (worker/thread-locks.ts) and the
   * job's copy waits for it.
   */
  leaseSeconds?: number;
}

export const finishedQueue = (queue: string) => `${queue}.finished`;

/** The `NOTIFY` channel a new job is announced on (the payload is the queue's name). */
export const JOB_CHANNEL = "langgraph_replan_jobs";

/** Creates the queues (idempotent) on a started pg-boss. */
export async function ensureQueues(boss: PgBoss, queue: string, leaseSeconds: number): Promise<void> {
  const existing = new Set((await boss.getQueues()).map((q) => q.name));
  // A dead worker's job comes back after its lease as a retry (so does one whose run threw, a
  // second later); ten of them in a row mean something other than a dead worker is wrong.
  if (!existing.has(queue))
    await boss.createQueue(queue, { name: queue, retryLimit: 10, retryDelay: 1, expireInSeconds: leaseSeconds });
  if (!existing.has(finishedQueue(queue))) await boss.createQueue(finishedQueue(queue), { name: finishedQueue(queue) });
}

/** A connection to the queue for callers that enqueue without running a worker. */
export interface QueueClient {
  enqueueRun(threadId: string, input: PlanManagerInputType): Promise<string>;
  enqueueResume(threadId: string, value: ResumeValue, interruptId?: string): Promise<string>;
  enqueueResumeStopped(threadId: string): Promise<string>;
  /**
   * An operator's stop: a thread a worker is running gets a stop request, which that worker takes at
   * its next step boundary (true); a thread no worker holds is held here while `whenIdle` stops it in
   * its checkpoint (`requestStop`), and no request is left behind (false).
   */
  requestStop(threadId: string, reason: string | undefined, whenIdle: () => Promise<void>): Promise<boolean>;
  /** Takes one finished report off `<queue>.finished`, if any (reports are also the jobs' outputs). */
  nextFinished(): Promise<ThreadFinished | undefined>;
  close(): Promise<void>;
  /** The pg-boss instance, for what this API does not cover (its own monitoring, dashboards). */
  readonly boss: PgBoss;
}

export function checkThreadId(threadId: unknown): string {
  if (typeof threadId !== "string" || threadId.trim() === "" || threadId.length > 512)
    throw new PlanManagerError("invalid_options", "threadId must be a non-empty string of at most 512 characters", {
      path: "threadId",
    });
  return threadId;
}

/**
 * A connection to the workers' queue that stays open: enqueue runs and resumes, and take the reports workers
 * send when a thread finishes.
 */
export async function openQueue(connectionString: string, options: QueueOptions = {}): Promise<QueueClient> {
  const queue = options.queue ?? DEFAULT_QUEUE;
  const boss = new PgBoss({ connectionString, supervise: false, schedule: false, max: 2 });
  boss.on("error", () => undefined);
  await boss.start();
  await ensureQueues(boss, queue, options.leaseSeconds ?? 120);
  const send = async (job: ThreadJob) => {
    checkThreadId(job.threadId);
    const id = await boss.send(queue, job);
    if (!id)
      throw new PlanManagerError("invalid_options", `the queue "${queue}" refused the job for "${job.threadId}"`);
    // Idle workers ask for it now rather than at their next poll (pg-boss 10 only polls).
    await boss.getDb().executeSql("SELECT pg_notify($1, $2)", [JOB_CHANNEL, queue]);
    return id;
  };
  // Opened on the first stop: most callers only enqueue.
  let locks: Promise<ThreadLocks> | undefined;
  return {
    boss,
    async requestStop(threadId, reason, whenIdle) {
      const held = await (locks ??= openThreadLocks(connectionString, 2));
      await held.addStopRequest(checkThreadId(threadId), reason);
      const lock = await held.tryLock(threadId);
      if (!lock) return true;
      try {
        await whenIdle();
      } finally {
        await held.clearStopRequest(threadId);
        await lock.release();
      }
      return false;
    },
    enqueueRun: (threadId, input) => send({ kind: "run", threadId, input }),
    enqueueResume: (threadId, value, interruptId) =>
      send({ kind: "resume", threadId, value, ...(interruptId ? { interruptId } : {}) }),
    enqueueResumeStopped: (threadId) => send({ kind: "resume_stopped", threadId }),
    async nextFinished() {
      const [job] = await boss.fetch<ThreadFinished>(finishedQueue(queue));
      if (!job) return undefined;
      await boss.complete(finishedQueue(queue), job.id);
      return job.data;
    },
    async close() {
      await boss.stop({ graceful: false, wait: true });
      await (await locks?.catch(() => undefined))?.close();
    },
  };
}

/** Enqueues a new run of a thread: a worker starts it (or continues it, if it already started). */
export async function enqueueRun(
  connectionString: string,
  request: { threadId: string; input: PlanManagerInputType } & QueueOptions,
): Promise<string> {
  const client = await openQueue(connectionString, request);
  try {
    return await client.enqueueRun(request.threadId, request.input);
  } finally {
    await client.close();
  }
}

/** Enqueues the answer to a parked thread's question (check it first with `resumeRun`'s rules: see the CLI). */
export async function enqueueResume(
  connectionString: string,
  request: { threadId: string; value: ResumeValue; interruptId?: string } & QueueOptions,
): Promise<string> {
  const client = await openQueue(connectionString, request);
  try {
    return await client.enqueueResume(request.threadId, request.value, request.interruptId);
  } finally {
    await client.close();
  }
}
