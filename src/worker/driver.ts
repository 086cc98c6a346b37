/**
 * Drives one thread for one job, from its checkpoint, until it finishes or waits for a person.
 * Every decision here is made on the checkpoint, never on the job alone: a job may be a retry
 * after its worker died, or a copy handed out again after its lease, so the thread may already be
 * further along than the job thinks.
 */
import { Command, type LangGraphRunnableConfig, type StateSnapshot } from "@langchain/langgraph";
import { resumeProblem } from "../plan/resume.js";
import { isRunPaused, RUN_CONTROL } from "../runtime/run-control.js";
import type { InterruptPayload } from "../plan/schema/interrupts.js";
import type { ThreadFinished, ThreadJob } from "./queue.js";
import { reopenStopped, requestStop, type StoppableGraph } from "./stop-run.js";
import type { ThreadControl } from "./stop-watch.js";
import type { ThreadLocks } from "./thread-locks.js";

export interface DrivableGraph extends StoppableGraph {
  invoke(
    input: unknown,
    config: LangGraphRunnableConfig & { durability?: "sync" | "async" | "exit" },
  ): Promise<unknown>;
}

/**
 * Runs the thread in one go: the executor takes an operator's stop or the slice's end from
 * `control` at a step boundary (runtime/run-control.ts), so the run is never paused to ask.
 * Returns the run's output (with `__interrupt__` when it parked at a question), or undefined when
 * it ended paused (the slice ran out).
 */
async function run(graph: DrivableGraph, input: unknown, config: LangGraphRunnableConfig): Promise<Output | undefined> {
  try {
    // LangGraph's default ("async") writes a checkpoint while the next node already runs: a worker
    // killed then would lose a finished step and call its tool again.
    return ((await graph.invoke(input, { ...config, durability: "sync" })) ?? {}) as Output;
  } catch (error) {
    if (isRunPaused(error)) return undefined;
    throw error;
  }
}

interface Output {
  status?: string;
  outcome?: unknown;
  __interrupt__?: unknown[];
}

/**
 * One job's turn: a slot among the threads the process runs at once (undefined when none freed up
 * in time), and the end of its slice — pg-boss fails a job that outlives its lease (its handler
 * timeout), so a long run is cut into slices shorter than the lease, each a new job.
 */
export interface Turn {
  slot(): Promise<(() => void) | undefined>;
  until: number;
  /** Queues a job that carries the thread on from its checkpoint. */
  continueLater(): Promise<void>;
  /** Queues this job again, unchanged. */
  requeue(): Promise<void>;
}

/** What the job does first: send an input (`null` carries on), reopen a stopped thread, refuse, or nothing. */
type First = { move: "input"; input: unknown } | { move: "reopen" } | { move: "refuse"; problem: string } | undefined;

const pendingInterrupts = (snapshot: StateSnapshot) => snapshot.tasks.flatMap((t) => t.interrupts ?? []);

function firstMove(job: ThreadJob, snapshot: StateSnapshot): First {
  const values = (snapshot.values ?? {}) as { status?: string };
  const started = values.status !== undefined;
  const pending = pendingInterrupts(snapshot);
  // A run cut short (a dead worker, or a step boundary this driver paused at) carries on from its
  // checkpoint. `tasks`, not `next`: a task whose writes were saved before its worker died is left
  // out of `next`, yet the run has not moved past it.
  const midRun = started && snapshot.tasks.length > 0 && pending.length === 0;
  if (midRun) return { move: "input", input: null };
  switch (job.kind) {
    case "run":
      return started ? undefined : { move: "input", input: job.input };
    case "resume": {
      const question = pending[0];
      // Another question than the one answered: the answer was taken before a worker died.
      if (!question || (job.interruptId !== undefined && question.id !== job.interruptId)) return undefined;
      const problem = resumeProblem(job.value, (question.value as InterruptPayload).options);
      return problem ? { move: "refuse", problem } : { move: "input", input: new Command({ resume: job.value }) };
    }
    case "resume_stopped":
      return values.status === "stopped" ? { move: "reopen" } : undefined;
  }
}

const report = (threadId: string, snapshot: StateSnapshot): ThreadFinished => {
  const values = (snapshot.values ?? {}) as { status?: string; outcome?: unknown };
  return {
    threadId,
    status: values.status ?? "not started",
    parked: pendingInterrupts(snapshot).length > 0,
    ...(values.outcome !== undefined ? { outcome: values.outcome } : {}),
  };
};

/**
 * Runs the job's thread. Returns where the thread stands (finished, parked or stopped), undefined
 * for a thread that never started, a report with `error` when a resume value does not answer the pending
 * question (the thread is left as it was), and `{ continued: true }` when the slice ran out or no
 * slot freed up in time (the thread is back in the queue: `continueLater`).
 */
export async function driveThread(
  graph: DrivableGraph,
  job: ThreadJob,
  /** The thread's stop requests as this worker hears them (worker/stop-watch.ts). */
  control: ThreadControl,
  stops: Pick<ThreadLocks, "clearStopRequest">,
  turn: Turn,
  now: () => number = Date.now,
): Promise<ThreadFinished | { continued: true } | undefined> {
  const config = { configurable: { thread_id: job.threadId } };
  const snapshot = await graph.getState(config);
  const first = firstMove(job, snapshot);
  // Nothing to do, but the thread may have finished or parked under a worker that died before
  // reporting it: report again (reports are at least once), unless it never started.
  if (first === undefined)
    return (snapshot.values as { status?: string }).status ? report(job.threadId, snapshot) : undefined;
  if (first.move === "refuse") return { ...report(job.threadId, snapshot), error: first.problem };
  const release = await turn.slot();
  if (!release) {
    // Nothing has run: the same job goes back (a "run" job carries the thread's input).
    await turn.requeue();
    return { continued: true };
  }
  const timer = setTimeout(() => control.pause(), Math.max(0, turn.until - now()));
  let output: Output | undefined;
  try {
    if (first.move === "reopen") await reopenStopped(graph, config);
    const input = first.move === "input" ? first.input : null;
    output = await run(graph, input, { configurable: { ...config.configurable, [RUN_CONTROL]: control } });
  } finally {
    clearTimeout(timer);
    release();
  }
  if (!output) {
    await turn.continueLater();
    return { continued: true };
  }
  await control.refresh();
  const stop = control.stop;
  // The run's output says where it stands: no checkpoint is read back (a delta channel read costs
  // more than a short step).
  const parked = (output.__interrupt__ ?? []).length > 0;
  if (stop) {
    // A stop the run did not take (it arrived as the run was ending): a parked thread can still
    // take it; a finished one has nothing left to stop.
    if (parked) await requestStop(graph, config, { ...(stop.reason ? { reason: stop.reason } : {}), now });
    await stops.clearStopRequest(job.threadId);
    if (parked) return report(job.threadId, await graph.getState(config));
  }
  const { status = "not started", outcome } = output;
  return { threadId: job.threadId, status, parked, ...(outcome !== undefined ? { outcome } : {}) };
}
