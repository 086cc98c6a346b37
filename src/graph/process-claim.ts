/**
 * One run per thread across processes. A run first takes its thread in this process
 * (graph/thread-lock.ts), then claims it through its saver's adapter (src/storage/): on LangGraph's
 * SQLite or PostgreSQL saver in the database the checkpoints live in — a lease row in the SQLite
 * file, a session advisory lock on PostgreSQL (freed by the server when the holder's connection
 * drops) — so a second process gets `thread_busy` before anything is read or written. Any other
 * saver gets the in-process hold only: its storage is opaque to us. Taken once per run, not per
 * step; released when the in-process hold is (every node the run started has returned).
 * docs/decisions/0018-one-run-per-thread-across-processes.md.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";
import { originalSaver, saverAdapter } from "../storage/index.js";
import { acquireThread, type ThreadRef, type ThreadRun } from "./thread-lock.js";

function busy(threadId: string, holder: string): PlanManagerError {
  return new PlanManagerError(
    "thread_busy",
    `thread "${threadId}" is being run by another process (${holder}); wait for that run to finish ` +
      "(or use another thread_id): two runs on one thread would both call every tool",
    { path: "configurable.thread_id" },
  );
}

/** Releases still on their way to the database, per saver and thread. */
const releasing = new WeakMap<object, Map<string, Promise<unknown>>>();

/**
 * Claims the thread through the saver's adapter (storage/): in the database for SQLite and
 * PostgreSQL; for any other saver nothing beyond the in-process hold. Resolves to the claim's
 * release, or throws `thread_busy`. Only a top-level run claims (see holdThread).
 */
async function claimInDatabase(checkpointer: object, threadId: string): Promise<() => Promise<unknown>> {
  const claim = await saverAdapter(checkpointer as BaseCheckpointSaver).claimThread(threadId);
  if ("heldBy" in claim) throw busy(threadId, claim.heldBy);
  return () => claim.release();
}

/** A run's hold on its thread, as `holdThread` takes it. */
export interface HeldThread extends ThreadRun {
  /**
   * Resolves once the claim in the database has been released, when the thread is free now; at
   * once while tracked work still holds it (a stopped run) or when nothing was claimed there.
   */
  released(): Promise<void>;
}

const settled = (release: Promise<unknown> | undefined): Promise<void> =>
  (release ?? Promise.resolve()).then(
    () => undefined,
    () => undefined,
  );

/**
 * Holds the thread for a run, in this process and, on a SQLite or PostgreSQL saver, across
 * processes. A subgraph's run happens inside its parent's, which holds the thread already.
 */
export async function holdThread(ref: ThreadRef): Promise<HeldThread> {
  const run = acquireThread(ref);
  if (ref.threadId === undefined || ref.checkpointer === undefined || ref.namespace !== "")
    return { ...run, released: () => settled(undefined) };
  const { checkpointer, threadId } = ref;
  let pending = releasing.get(checkpointer);
  if (!pending) releasing.set(checkpointer, (pending = new Map()));
  const releases = pending;
  let mine: Promise<unknown> | undefined;
  try {
    // This process's previous run on the thread may still be letting go of it (an unlock in flight).
    await releases.get(threadId);
    const release = await claimInDatabase(checkpointer, threadId);
    run.whenFree(() => {
      const done = release().finally(() => {
        if (releases.get(threadId) === done) releases.delete(threadId);
      });
      releases.set(threadId, done);
      mine = done;
    });
  } catch (error) {
    run.end();
    throw error;
  }
  return { ...run, released: () => settled(mine) };
}

/**
 * Deletes every checkpoint and write of a thread, unless a run holds it — in this process, or in
 * the database when the saver's adapter claims there — which throws `thread_busy` and deletes
 * nothing. The thread is held while it is deleted, so no run can start on it halfway; `onlyIf`,
 * asked while it is held, can still decline (resolves to false: nothing deleted).
 */
export async function deleteThread(
  checkpointer: BaseCheckpointSaver,
  threadId: string,
  onlyIf?: () => Promise<boolean>,
): Promise<boolean> {
  // Runs hold the thread under the caller's saver, not the graph's view of it.
  const saver = originalSaver(checkpointer);
  const run = acquireThread({ checkpointer: saver, threadId, namespace: "" });
  try {
    // A run of this process that has let go of the thread may still be unlocking it in the
    // database (freed in the background when a stopped run's last call returned): not a holder.
    await settled(releasing.get(saver)?.get(threadId));
    const result = await saverAdapter(checkpointer).deleteThread(threadId, onlyIf);
    if (!result.deleted && result.heldBy !== undefined) throw busy(threadId, result.heldBy);
    return result.deleted;
  } finally {
    run.end();
  }
}

/** Lets go of a held thread when the run fails before it starts, and passes the error on. */
export const letGoOf =
  (thread: { end(): void; released(): Promise<void> }) =>
  async (error: unknown): Promise<never> => {
    thread.end();
    await thread.released();
    throw error;
  };
