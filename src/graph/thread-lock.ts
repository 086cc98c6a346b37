/**
 * One run per thread at a time, in this process. Two `invoke`s on the same thread would both
 * start from the same checkpoint and both run every tool, side effects included; the second is
 * refused with `PlanManagerError("thread_busy")` instead. Across processes nothing here helps:
 * each process must own its threads (a job queue with leases; see README "Scaling out").
 */
import { PlanManagerError } from "../errors.js";

/** Held threads per checkpointer (the namespace a thread id lives in). */
const held = new WeakMap<object, Set<string>>();
const noCheckpointer = {};

export interface ThreadRef {
  checkpointer: object | undefined;
  threadId: string | undefined;
  /** A subgraph's runs happen inside its parent's run, under their own namespace. */
  namespace: string;
}

/** Takes the thread, or throws `thread_busy`; returns the release function. No thread id: nothing to hold. */
export function acquireThread(ref: ThreadRef): () => void {
  if (ref.threadId === undefined) return () => undefined;
  const domain = ref.checkpointer ?? noCheckpointer;
  const key = `${ref.threadId}\u0000${ref.namespace}`;
  let threads = held.get(domain);
  if (!threads) held.set(domain, (threads = new Set()));
  if (threads.has(key)) {
    const where = ref.namespace ? ` (subgraph ${ref.namespace})` : "";
    throw new PlanManagerError(
      "thread_busy",
      `thread "${ref.threadId}"${where} is already running in this process; wait for that run to finish ` +
        "(or use another thread_id): two runs on one thread would both call every tool",
      { path: "configurable.thread_id" },
    );
  }
  threads.add(key);
  return () => threads.delete(key);
}
