/**
 * Drives one thread for one job, from its checkpoint, until it finishes or waits for a person.
 * Every decision here is made on the checkpoint, never on the job alone: a job may be a retry
 * after its worker died, or a copy handed out again after its lease, so the thread may already be
 * further along than the job thinks.
 */
import { Command, type LangGraphRunnableConfig, type StateSnapshot } from "@langchain/langgraph";
import { resumeProblem } from "../plan/resume.js";
import { DRAIN_EACH_VISIT } from "../runtime/dispatch.js";
import type { InterruptPayload } from "../plan/schema.js";
import type { ThreadFinished, ThreadJob } from "./queue.js";
import { managerWrite } from "../graph/boundary.js";
import { reopenStopped, requestStop, type StoppableGraph } from "./stop.js";
import type { ThreadLocks } from "./thread-locks.js";

export interface DrivableGraph extends StoppableGraph {
  stream(
    input: unknown,
    config: LangGraphRunnableConfig & {
      interruptAfter?: string[];
      streamMode: "updates";
      durability?: "sync" | "async" | "exit";
    },
  ): Promise<AsyncIterable<Record<string, unknown>>>;
}

/** Where the stream said the run stopped: a step boundary (breakpoint), a question, or the end. */
type Pause = "boundary" | "question" | "end";

/**
 * Runs until the next pause. The updates stream tells a breakpoint (`__interrupt__: []`) from a
 * question (a non-empty list) and from the end (no `__interrupt__`), so no checkpoint is read back
 * at a step boundary: that read cost more than the step itself on a loaded machine.
 */
async function runToPause(graph: DrivableGraph, input: unknown, config: LangGraphRunnableConfig): Promise<Pause> {
  let pause: Pause = "end";
  for await (const chunk of await graph.stream(input, {
    ...config,
    interruptAfter: ["executor"],
    streamMode: "updates",
    // LangGraph's default ("async") writes a checkpoint while the next node already runs: a worker
    // killed then would lose a finished step and call its tool again.
    durability: "sync",
  })) {
    const raised = chunk.__interrupt__;
    if (Array.isArray(raised)) pause = raised.length > 0 ? "question" : "boundary";
  }
  return pause;
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
 * question (the thread is left as it was), and `{ continued: true }` when the slice ran out at a
 * step boundary: pg-boss fails a job that outlives its lease (its handler timeout), so a long run
 * is cut into slices shorter than the lease, each a new job (`continueLater`).
 */
export async function driveThread(
  graph: DrivableGraph,
  job: ThreadJob,
  /** Asked at every step boundary: a primary-key read, cheap beside the step's own checkpoint write. */
  stops: Pick<ThreadLocks, "stopRequest" | "clearStopRequest">,
  slice: { until: number; continueLater: () => Promise<void> } | undefined,
  now: () => number = Date.now,
): Promise<ThreadFinished | { continued: true } | undefined> {
  // Paused after every executor visit, a run must not leave calls in flight: each visit drains them.
  const config = { configurable: { thread_id: job.threadId, [DRAIN_EACH_VISIT]: true } };
  let snapshot = await graph.getState(config);
  const first = firstMove(job, snapshot);
  // Nothing to do, but the thread may have finished or parked under a worker that died before
  // reporting it: report again (reports are at least once), unless it never started.
  if (first === undefined)
    return (snapshot.values as { status?: string }).status ? report(job.threadId, snapshot) : undefined;
  if (first.move === "refuse") return { ...report(job.threadId, snapshot), error: first.problem };
  if (first.move === "reopen") await reopenStopped(graph, config);
  let input = first.move === "input" ? first.input : null;
  // The run pauses after each executor visit, a step boundary, to read the operator's stop requests.
  for (;;) {
    const pause = await runToPause(graph, input, config);
    input = null;
    if (pause !== "boundary") {
      snapshot = await graph.getState(config);
      const parked = pendingInterrupts(snapshot).length > 0;
      const stop = await stops.stopRequest(job.threadId);
      // A stop that arrived while the run was ending: a parked thread can still take it; a
      // finished one has nothing left to stop.
      if (stop && parked) await requestStop(graph, config, { ...stop, now });
      if (stop) await stops.clearStopRequest(job.threadId);
      if (stop && parked) snapshot = await graph.getState(config);
      return report(job.threadId, snapshot);
    }
    const stop = await stops.stopRequest(job.threadId);
    if (stop) {
      const request = { requestedAt: new Date(now()).toISOString(), ...(stop.reason ? { reason: stop.reason } : {}) };
      await graph.updateState(config, managerWrite({ stop: request }), "executor");
      await stops.clearStopRequest(job.threadId);
    } else if (slice && now() >= slice.until) {
      await slice.continueLater();
      return { continued: true };
    }
  }
}
