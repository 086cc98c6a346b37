/**
 * One run per thread across processes. A run first takes its thread in this process
 * (graph/thread-lock.ts), then, on LangGraph's SQLite or PostgreSQL saver, claims it in the
 * database the checkpoints live in: a lease row in the SQLite file, a session advisory lock on
 * PostgreSQL (freed by the server when the holder's connection drops). A second process gets
 * `thread_busy` before anything is read or written. Other savers (MemorySaver) live in one
 * process, where the in-process hold is enough. Taken once per run, not per step; released when
 * the in-process hold is (every node the run started has returned).
 * docs/decisions/0018-one-run-per-thread-across-processes.md.
 */
import { PlanManagerError } from "../errors.js";
import { tryAdvisoryLock } from "./advisory-lock.js";
import { saverStorage } from "./saver-handles.js";
import { claimSqliteThread } from "./sqlite-thread-claim.js";
import { acquireThread, type ThreadRef, type ThreadRun } from "./thread-lock.js";

/** The first key of a run's advisory lock: apart from the workers' own locks and the application's. */
export const RUN_LOCK_SPACE = "langgraph-replan.run";

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

/** Claims the thread in the saver's database; resolves to the claim's release, or throws `thread_busy`. */
async function claimInDatabase(
  checkpointer: object,
  threadId: string,
  namespace: string,
): Promise<() => Promise<unknown>> {
  const storage = saverStorage(checkpointer);
  if (storage?.kind === "sqlite") {
    const claim = claimSqliteThread(storage.db, threadId, namespace);
    if ("release" in claim) return async () => claim.release();
    throw busy(threadId, `pid ${claim.pid} on ${claim.host}`);
  }
  if (storage?.kind === "postgres") {
    // Only a top-level run claims (see holdThread), so the thread id alone is the key.
    const lock = await tryAdvisoryLock(storage.pool, RUN_LOCK_SPACE, threadId);
    if (lock) return () => lock.release().catch(() => undefined);
    throw busy(threadId, "it holds the thread's lock in PostgreSQL");
  }
  return async () => undefined;
}

/**
 * Holds the thread for a run, in this process and, on a SQLite or PostgreSQL saver, across
 * processes. A subgraph's run happens inside its parent's, which holds the thread already.
 */
export async function holdThread(ref: ThreadRef): Promise<ThreadRun> {
  const run = acquireThread(ref);
  if (ref.threadId === undefined || ref.checkpointer === undefined || ref.namespace !== "") return run;
  const { checkpointer, threadId } = ref;
  let pending = releasing.get(checkpointer);
  if (!pending) releasing.set(checkpointer, (pending = new Map()));
  const releases = pending;
  try {
    // This process's previous run on the thread may still be letting go of it (an unlock in flight).
    await releases.get(threadId);
    const release = await claimInDatabase(checkpointer, threadId, ref.namespace);
    run.whenFree(() => {
      const done = release().finally(() => {
        if (releases.get(threadId) === done) releases.delete(threadId);
      });
      releases.set(threadId, done);
    });
  } catch (error) {
    run.end();
    throw error;
  }
  return run;
}
