/**
 * `createWorker`: runs plan manager threads taken from a PostgreSQL job queue (pg-boss), with
 * their checkpoints in `PostgresSaver` on the same database. Start as many worker processes as
 * you like; a thread runs on at most one of them at a time (worker/thread-locks.ts), a thread
 * waiting for a person holds none, and a dead worker's thread is taken up by another once its
 * job's lease expires. A run is never paused to ask for stop requests: the process hears them
 * (worker/stop-watch.ts) and the executor takes them at the next step boundary.
 */
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import PgBoss from "pg-boss";
import { PlanManagerError } from "../errors.js";
import type { PlanManagerGraph } from "../graph/create-plan-manager.js";
import { driveThread, type DrivableGraph } from "./driver.js";
import { openListener, type Listener } from "./listener.js";
import { PLAN_CHANNEL } from "./plan-wakes.js";
import {
  DEFAULT_QUEUE,
  ensureQueues,
  finishedQueue,
  JOB_CHANNEL,
  type ThreadFinished,
  type ThreadJob,
} from "./queue.js";
import { openSlots, type Slots } from "./slots.js";
import { openStopWatch, type StopWatch } from "./stop-watch.js";
import { openThreadLocks, STOP_CHANNEL, type ThreadLocks } from "./thread-locks.js";

/** Options of `createWorker`. */
export interface WorkerOptions {
  /** The plan manager, uncompiled (`createPlanManager(...)`): the worker compiles it with its PostgresSaver. */
  graph: PlanManagerGraph;
  /** PostgreSQL for the checkpoints, the queue and the thread locks. */
  connectionString: string;
  /** Threads this process runs at once (default 1). */
  concurrency?: number;
  /** Queue name (default "langgraph-replan"). */
  queue?: string;
  /**
   * Seconds before a dead worker's job is handed out again (default 120). pg-boss also fails a job
   * whose handler runs longer, so the worker hands a running thread back to the queue at the first
   * step boundary after half the lease: one step must take less than half of it.
   */
  leaseSeconds?: number;
  /** Seconds between pg-boss's checks for expired leases (default 10). */
  maintenanceSeconds?: number;
  /**
   * Seconds between polls of an empty queue (default 0.5, pg-boss's smallest). Jobs sent through
   * `enqueueRun`/`enqueueResume`/`openQueue` are announced, so idle lanes take them at once.
   */
  pollSeconds?: number;
  /**
   * Called in this process when a thread it ran finishes, parks at a question or stops. Each of these is
   * also announced to every process on the database (`PLAN_CHANNEL`, the thread id as payload), so an
   * MCP server's `plan_wait` on the thread returns (docs/decisions/0074-workers-wake-plan-waits.md).
   */
  onFinished?: (report: ThreadFinished) => void | Promise<void>;
  /** Errors the worker could not hand to a job (connection drops and the like). Default: ignored. */
  onError?: (error: unknown) => void;
}

/** A running worker: start it, stop it. */
export interface Worker {
  /** Resolves once the worker is taking jobs. */
  start(): Promise<void>;
  /** Stops taking jobs and waits for the threads it runs to reach a pause (default) or not (`graceful: false`). */
  stop(options?: { graceful?: boolean }): Promise<void>;
}

function check(options: WorkerOptions): Required<Pick<WorkerOptions, "concurrency" | "leaseSeconds">> {
  const concurrency = options.concurrency ?? 1;
  const leaseSeconds = options.leaseSeconds ?? 120;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1_000)
    throw new PlanManagerError("invalid_options", "concurrency must be an integer from 1 to 1000", {
      path: "concurrency",
    });
  if (!Number.isFinite(leaseSeconds) || leaseSeconds < 1)
    throw new PlanManagerError("invalid_options", "leaseSeconds must be at least 1", { path: "leaseSeconds" });
  if (options.pollSeconds !== undefined && !(options.pollSeconds >= 0.5))
    throw new PlanManagerError("invalid_options", "pollSeconds must be at least 0.5 (pg-boss's floor)", {
      path: "pollSeconds",
    });
  if (typeof options.connectionString !== "string" || !/^postgres(ql)?:\/\//.test(options.connectionString))
    throw new PlanManagerError("invalid_options", "connectionString must be a postgres:// URL", {
      path: "connectionString",
    });
  if (typeof options.graph?.compile !== "function")
    throw new PlanManagerError(
      "invalid_options",
      "graph must be the uncompiled plan manager (createPlanManager(...))",
      {
        path: "graph",
      },
    );
  return { concurrency, leaseSeconds };
}

/** What one job needs: the compiled graph, the queue, the thread locks and the stop watch. */
interface Parts {
  graph: DrivableGraph;
  boss: PgBoss;
  queue: string;
  /** Seconds, as the queue was created with. */
  lease: number;
  locks: ThreadLocks;
  stops: StopWatch;
  slots: Slots;
  onFinished: WorkerOptions["onFinished"];
  /** Says on `PLAN_CHANNEL` that the thread ended, parked or stopped (never throws: a lost wake costs a wait its timeout). */
  announce: (threadId: string) => Promise<void>;
}

/** Runs one job's thread under its lock, reports where it stands, and returns the job's output. */
async function runJob(parts: Parts, data: ThreadJob): Promise<object> {
  const { boss, queue, locks } = parts;
  const lock = await locks.tryLock(data.threadId);
  if (!lock) {
    // Another worker runs this thread (a copy of its job came back after the lease): try again shortly.
    await boss.send(queue, data, { startAfter: 1 });
    return { deferred: true };
  }
  const control = await parts.stops.follow(data.threadId).catch(async (error: unknown) => {
    await lock.release();
    throw error;
  });
  try {
    const started = Date.now();
    const turn = {
      // A job waiting for a slot gives up after a quarter of the lease, so that its run has at least
      // another quarter before the slice ends (half the lease: the rest is room for the step in flight).
      slot: () => parts.slots.acquire((parts.lease * 1000) / 4),
      until: started + (parts.lease * 1000) / 2,
      continueLater: async () => void (await boss.send(queue, { kind: "run", threadId: data.threadId, input: {} })),
      requeue: async () => void (await boss.send(queue, data)),
    };
    const result = await driveThread(parts.graph, data, control, locks, turn);
    if (result && "threadId" in result) {
      // Its checkpoint is written ("sync" durability): a plan_wait woken now reads where it stands.
      await parts.announce(data.threadId);
      await boss.send(finishedQueue(queue), result);
      await parts.onFinished?.(result);
    }
    return result ?? { nothingToDo: true };
  } finally {
    control.release();
    await lock.release();
  }
}

/**
 * Starts pg-boss workers (lanes), one more than the threads run at once (worker/slots.ts). pg-boss
 * waits out the rest of its polling interval after a job unless told otherwise: a lane that just
 * finished one asks again at once, and a job announced on `JOB_CHANNEL` wakes every lane (they
 * only wait when the queue is empty).
 */
async function startLanes(parts: Parts, listener: Listener, lanesWanted: number, pollingIntervalSeconds: number) {
  const { boss, queue } = parts;
  const lanes: string[] = [];
  listener.on(JOB_CHANNEL, (name) => {
    if (name === queue) for (const lane of lanes) boss.notifyWorker(lane);
  });
  for (let i = 0; i < lanesWanted; i++) {
    let lane = "";
    lane = await boss.work<ThreadJob>(queue, { pollingIntervalSeconds }, async ([job]) => {
      try {
        return await runJob(parts, job!.data);
      } finally {
        boss.notifyWorker(lane);
      }
    });
    lanes.push(lane);
  }
}

/**
 * A worker running threads taken from a PostgreSQL queue, with `PostgresSaver` checkpoints on the same
 * database; start as many as you like (docs/guides/scaling-out.md).
 */
export function createWorker(options: WorkerOptions): Worker {
  const { concurrency, leaseSeconds } = check(options);
  const queue = options.queue ?? DEFAULT_QUEUE;
  const onError = options.onError ?? (() => undefined);
  let close: (graceful: boolean) => Promise<void> = async () => undefined;

  async function start() {
    const locks = await openThreadLocks(options.connectionString, concurrency + 3);
    const saver = PostgresSaver.fromConnString(options.connectionString);
    await locks.serialized(() => saver.setup());
    const graph = options.graph.compile({ checkpointer: saver }) as unknown as DrivableGraph;
    const boss = new PgBoss({
      connectionString: options.connectionString,
      maintenanceIntervalSeconds: options.maintenanceSeconds ?? 10,
      schedule: false,
      max: 4,
    });
    boss.on("error", onError);
    await locks.serialized(async () => {
      await boss.start();
      await ensureQueues(boss, queue, leaseSeconds);
    });
    // The queue keeps the lease it was created with (by a worker or by `openQueue`).
    const lease = (await boss.getQueue(queue))?.expireInSeconds ?? leaseSeconds;
    const listener = await openListener(options.connectionString, [JOB_CHANNEL, STOP_CHANNEL], onError);
    const stops = openStopWatch(listener, locks, { onError });
    const slots = openSlots(concurrency);
    const announce = (threadId: string) =>
      boss
        .getDb()
        .executeSql("SELECT pg_notify($1, $2)", [PLAN_CHANNEL, threadId])
        .then(() => undefined, onError);
    const parts = { graph, boss, queue, lease, locks, stops, slots, onFinished: options.onFinished, announce };
    await startLanes(parts, listener, concurrency + 1, options.pollSeconds ?? 0.5);
    close = async (graceful) => {
      await boss.stop({ graceful, wait: true, timeout: graceful ? 300_000 : 1 });
      stops.close();
      await listener.close();
      await locks.close();
      await saver.end();
    };
  }

  return { start, stop: ({ graceful = true } = {}) => close(graceful) };
}
