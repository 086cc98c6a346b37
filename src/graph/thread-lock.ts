/**
 * One run per thread at a time, in this process. Two `invoke`s on the same thread would both
 * start from the same checkpoint and both run every tool, side effects included; the second is
 * refused with `PlanManagerError("thread_busy")` instead. Across processes, a run on a SQLite or
 * PostgreSQL saver also claims its thread in the database (graph/process-claim.ts).
 *
 * A run holds its thread until it has ended AND every node and tool call it started has returned.
 * A run its caller stops (its signal, or a stream closed with `break`) goes on in the background to
 * its next step boundary (graph/stopped-run.ts); releasing the thread before then would let a new
 * run start the same tool call again beside it.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";
import { runPart, withRunPart } from "../runtime/run-parts.js";

/** Held threads per checkpointer (the namespace a thread id lives in), each with the run holding it. */
const held = new WeakMap<object, Map<string, ThreadRun>>();

export interface ThreadRef {
  /** The checkpointer the run reads and writes: a subgraph borrows its parent's. */
  checkpointer: object | undefined;
  threadId: string | undefined;
  /** A subgraph's runs happen inside its parent's run, under their own namespace. */
  namespace: string;
}

/** A run's hold on its thread. */
export interface ThreadRun {
  /** Keeps the thread held until `work` settles, even after the run has ended. */
  track(work: Promise<unknown>): void;
  /** The run has ended; the thread is freed once tracked work has settled too. */
  end(): void;
  /** Calls `fn` once the thread is freed (at once if it already is). */
  whenFree(fn: () => void): void;
}

const unheld: ThreadRun = { track: () => undefined, end: () => undefined, whenFree: (fn) => fn() };

/**
 * Takes the thread, or throws `thread_busy`. Without a thread id or a checkpointer there is no
 * shared state to protect, so nothing is held.
 */
export function acquireThread(ref: ThreadRef): ThreadRun {
  if (ref.threadId === undefined || ref.checkpointer === undefined) return unheld;
  const key = `${ref.threadId}\u0000${ref.namespace}`;
  let threads = held.get(ref.checkpointer);
  if (!threads) held.set(ref.checkpointer, (threads = new Map()));
  if (threads.has(key)) {
    const where = ref.namespace ? ` (subgraph ${ref.namespace})` : "";
    throw new PlanManagerError(
      "thread_busy",
      `thread "${ref.threadId}"${where} is already running in this process; wait for that run to finish ` +
        "(or use another thread_id): two runs on one thread would both call every tool",
      { path: "configurable.thread_id" },
    );
  }
  const map = threads;
  const inFlight = new Set<Promise<unknown>>();
  const onFree: Array<() => void> = [];
  let ended = false;
  let freed = false;
  const free = () => {
    if (freed || !ended || inFlight.size > 0) return;
    freed = true;
    if (map.get(key) === run) map.delete(key);
    for (const fn of onFree.splice(0)) fn();
  };
  const run: ThreadRun = {
    track(work) {
      inFlight.add(work);
      const settle = () => {
        inFlight.delete(work);
        free();
      };
      work.then(settle, settle);
    },
    end() {
      ended = true;
      free();
    },
    whenFree(fn) {
      if (freed) fn();
      else onFree.push(fn);
    },
  };
  map.set(key, run);
  return run;
}

/**
 * Resolves once no run of this process holds the thread (at once if none does). A run its caller
 * stopped still writes the results of the calls it waits for; a write from outside waits for them.
 */
export function threadLetGo(ref: ThreadRef): Promise<void> {
  if (ref.threadId === undefined || ref.checkpointer === undefined) return Promise.resolve();
  const run = held.get(ref.checkpointer)?.get(`${ref.threadId}\u0000${ref.namespace}`);
  return run ? new Promise((resolve) => run.whenFree(resolve)) : Promise.resolve();
}

/** Whether a run of this process holds the thread now. */
export function heldHere(ref: ThreadRef): boolean {
  if (ref.threadId === undefined || ref.checkpointer === undefined) return false;
  return held.get(ref.checkpointer)?.has(`${ref.threadId}\u0000${ref.namespace}`) ?? false;
}

/** The config a run's nodes see: it carries the run's hold so that they can `trackNode`. */
export function withThreadRun<C extends { configurable?: Record<string, unknown> }>(
  config: C | undefined,
  run: ThreadRun,
): C {
  return withRunPart(config, "threadRun", run);
}

/**
 * Wraps an async node so that its run's thread stays held until the node returns, whether or not
 * the run is still there to take its result.
 */
export function trackNode<S, R>(
  node: (state: S, config: LangGraphRunnableConfig) => Promise<R>,
): (state: S, config: LangGraphRunnableConfig) => Promise<R> {
  return (state, config) => {
    const work = node(state, config);
    const run = runPart(config, "threadRun") as ThreadRun | undefined;
    run?.track(work);
    return work;
  };
}
