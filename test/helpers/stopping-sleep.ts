/** A sleep for runs a user stops during a retry's backoff, and the signals of the runs it stops. */
import type { Ledger } from "./agent-tools.js";

export interface StoppingSleep {
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Every sleep asked for, and whether it was handed a signal. */
  sleeps: { ms: number; signalled: boolean }[];
  next: () => AbortSignal;
}

/**
 * A sleep that stops the run (as a user pressing stop) when a tool was called since the last sleep,
 * that is during a retry's backoff, and then returns only when its signal aborts; a backoff scheduled
 * before a resumed call (no call since) passes at once. `next()` is a fresh signal for the next run.
 */
export function stoppingSleep(l: Ledger): StoppingSleep {
  const sleeps: { ms: number; signalled: boolean }[] = [];
  let stop = new AbortController();
  let seen = 0;
  const sleep = (ms: number, signal?: AbortSignal) => {
    sleeps.push({ ms, signalled: signal !== undefined });
    const calls = Object.values(l.calls).reduce((a, b) => a + b, 0);
    const retrying = calls > seen;
    seen = calls;
    if (!retrying) return Promise.resolve();
    stop.abort(new Error("stopped by the user"));
    if (!signal) return Promise.resolve();
    return new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
  };
  const next = () => (stop = new AbortController()).signal;
  return { sleep, sleeps, next };
}
