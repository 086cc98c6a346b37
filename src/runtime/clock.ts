/** The run's clock (`createPlanManager({ clock })`): injectable, so that tests never wait. */
import { PlanManagerError } from "../errors.js";

/** Time, injectable so that tests never wait. */
export interface Clock {
  /** Epoch milliseconds. Default `Date.now`. */
  now(): number;
  /** Waits `ms` milliseconds (retry backoff). Default: a real timer. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Node fires a timer of more than 2^31 − 1 ms after 1 ms: longer waits are chained. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const realSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (!(ms > 0) || signal?.aborted) return resolve();
    let left = ms;
    let timer: ReturnType<typeof setTimeout>;
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const next = () => {
      if (left <= 0) return done();
      const piece = Math.min(left, MAX_TIMER_MS);
      left -= piece;
      timer = setTimeout(next, piece);
    };
    next();
    signal?.addEventListener("abort", done, { once: true });
  });

/**
 * The clock, checked where it enters: `now` must return epoch milliseconds as a finite number.
 * It is read once here (a clock that returns a string fails at construction) and checked on every
 * read after, because a NaN or a string reaching a record would break the thread's next write.
 */
export function resolveClock(clock: Partial<Clock> | undefined): Clock {
  for (const field of ["now", "sleep"] as const) {
    if (clock?.[field] !== undefined && typeof clock[field] !== "function")
      throw new PlanManagerError("invalid_options", `clock.${field} must be a function`, { path: `clock.${field}` });
  }
  const sleep = clock?.sleep ?? realSleep;
  const userNow = clock?.now;
  if (!userNow) return { now: Date.now, sleep };
  const now = () => {
    const t: unknown = userNow();
    if (typeof t === "number" && Number.isFinite(t)) return t;
    const shown =
      typeof t === "string" ? JSON.stringify(t) : typeof t === "object" && t !== null ? "an object" : String(t);
    const message = `clock.now must return epoch milliseconds as a finite number; it returned ${shown}`;
    throw new PlanManagerError("invalid_options", message, { path: "clock.now" });
  };
  now();
  return { now, sleep };
}
