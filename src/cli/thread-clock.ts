/**
 * The run's clock, as the command line can know it. A graph may run on a clock of its own
 * (`createPlanManager({ clock })`, e.g. a test's or a simulation's), which the command line does not
 * have; an answer given here and stamped with the wall clock would sit months away from the run's
 * other times. The thread's latest stamp is its clock's reading when it paused, and the checkpoint
 * that paused it says when that was on the wall clock: the run's clock now is that reading plus the
 * wall time since. On a run whose clock is the wall clock this is the wall clock, less the moments
 * between its last stamp and its checkpoint.
 */
import type { Clock } from "../runtime/options.js";

interface Stamped {
  decisions?: { at?: string }[];
  replans?: { at?: string }[];
  watches?: { at?: string }[];
  steps?: Record<string, { startedAt?: string; endedAt?: string }>;
  facts?: Record<string, { observedAt?: string }>;
  progress?: { lastProgressAt?: string };
}

/** The latest time the run's own clock wrote into its state, in epoch ms, or undefined. */
export function latestStamp(values: Stamped): number | undefined {
  const stamps = [
    ...(values.decisions ?? []).map((d) => d.at),
    ...(values.replans ?? []).map((r) => r.at),
    ...(values.watches ?? []).map((w) => w.at),
    ...Object.values(values.steps ?? {}).flatMap((s) => [s.startedAt, s.endedAt]),
    ...Object.values(values.facts ?? {}).map((f) => f.observedAt),
    values.progress?.lastProgressAt,
  ]
    .map((t) => (typeof t === "string" ? Date.parse(t) : Number.NaN))
    .filter(Number.isFinite);
  // A fold, not Math.max(...stamps): a long run has more stamps than a call takes arguments.
  return stamps.length > 0 ? stamps.reduce((a, b) => (b > a ? b : a)) : undefined;
}

/**
 * A clock that carries on from the thread's: `values` are its state, `pausedAt` the wall time (ISO) of the
 * checkpoint they were read from, `wallNow` the wall clock. Without either time, the wall clock.
 */
export function threadClock(values: Stamped, pausedAt: string | undefined, wallNow: () => number): Pick<Clock, "now"> {
  const last = latestStamp(values);
  const paused = pausedAt === undefined ? Number.NaN : Date.parse(pausedAt);
  if (last === undefined || !Number.isFinite(paused)) return { now: wallNow };
  return { now: () => last + Math.max(0, wallNow() - paused) };
}
