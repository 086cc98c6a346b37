/**
 * How a worker hears of an operator's stop for a thread it runs, without pausing the run to ask:
 * `LISTEN` on the channel each stop request is announced on, a read of the thread's row when a
 * job starts and ends, and a slow poll of the rows of every thread it runs in case the listening
 * connection dropped. What it hears is kept in memory, where the executor reads it at each visit
 * (runtime/run-control.ts); the row is marked noticed so that an operator (or a test) can tell.
 */
import type { RunControl, RunRequest, StopRequest } from "../runtime/run-control.js";
import type { Listener } from "./listener.js";
import { STOP_CHANNEL, type ThreadLocks } from "./thread-locks.js";

/** One thread's control while this worker runs it. */
export interface ThreadControl extends RunControl {
  /** The operator's stop, once heard: what goes into the thread's state. */
  readonly stop: StopRequest | undefined;
  /** Asks the run to end at its next step boundary (the job's slice ran out). */
  pause(): void;
  /** Reads the thread's row now (a run that ended may have missed the announcement). */
  refresh(): Promise<void>;
  /** The worker no longer runs the thread. */
  release(): void;
}

export interface StopWatch {
  follow(threadId: string): Promise<ThreadControl>;
  close(): void;
}

export interface StopWatchOptions {
  /** Milliseconds between polls of the followed threads' rows (the fallback; default 2000). */
  pollMs?: number;
  now?: () => number;
  onError?: (error: unknown) => void;
}

interface Followed {
  stop?: StopRequest;
  paused: boolean;
}

export function openStopWatch(
  listener: Pick<Listener, "on">,
  locks: Pick<ThreadLocks, "stopRequests" | "noticeStop">,
  options: StopWatchOptions = {},
): StopWatch {
  const now = options.now ?? Date.now;
  const onError = options.onError ?? (() => undefined);
  const followed = new Map<string, Followed>();
  const check = async (threadIds: string[]) => {
    if (threadIds.length === 0) return;
    for (const [threadId, pending] of await locks.stopRequests(threadIds)) {
      const thread = followed.get(threadId);
      if (!thread || thread.stop) continue;
      thread.stop = {
        requestedAt: new Date(now()).toISOString(),
        ...(pending.reason ? { reason: pending.reason } : {}),
      };
      // Marked after the run can see it: whoever waits for "noticed" knows the next boundary takes it.
      if (!pending.noticed) await locks.noticeStop(threadId);
    }
  };
  listener.on(STOP_CHANNEL, (threadId) => {
    if (followed.has(threadId)) check([threadId]).catch(onError);
  });
  const timer = setInterval(() => void check([...followed.keys()]).catch(onError), options.pollMs ?? 2_000);
  timer.unref();

  return {
    async follow(threadId) {
      const thread: Followed = { paused: false };
      followed.set(threadId, thread);
      await check([threadId]);
      return {
        get stop() {
          return thread.stop;
        },
        wanted: (): RunRequest | undefined =>
          thread.stop ? { kind: "stop", stop: thread.stop } : thread.paused ? { kind: "pause" } : undefined,
        pause: () => void (thread.paused = true),
        refresh: () => check([threadId]),
        release: () => void (followed.get(threadId) === thread && followed.delete(threadId)),
      };
    },
    close: () => clearInterval(timer),
  };
}
