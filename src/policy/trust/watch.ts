/**
 * Assumption drift (docs/decisions/0041-evidence-freshness-and-drift.md): which watchers are due before a step
 * starts, what a watcher's answer says, and the deviation a drifted assumption raises. Pure: the run's clock
 * comes in as `now` (ms), the watcher's output as a value.
 */
import { evaluate } from "../../expr/cel.js";
import type { Assumption, Plan, Watch } from "../../plan/schema/plan.js";
import type { WatchRecord } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import type { Deviation } from "../ladder/deviation.js";
import { LIMITS } from "../../plan/schema/primitives.js";

export type WatchedAssumption = Assumption & { watch: NonNullable<Assumption["watch"]> };

const byPlan = new WeakMap<Plan, ReadonlyMap<string, WatchedAssumption>>();

/** The plan's watched assumptions by id, found once per plan version (none: the plan pays nothing for watches). */
export function watchedAssumptions(plan: Plan): ReadonlyMap<string, WatchedAssumption> {
  let out = byPlan.get(plan);
  if (out) return out;
  const found = new Map<string, WatchedAssumption>();
  for (const a of plan.assumptions) if (a.watch !== undefined) found.set(a.id, a as WatchedAssumption);
  byPlan.set(plan, (out = found));
  return out;
}

/** A watcher's call timeout when its `watch` gives no `timeoutMs`: at most this, less when the policy's default is less. */
export const WATCH_TIMEOUT_MS = 30_000;

/** After a watcher's call fails (it threw or timed out), no call before this many ms, even with `everyMs` 0. */
export const WATCH_RETRY_AFTER_FAILURE_MS = 30_000;

/** How long one call of `watch` may take: its `timeoutMs`, else the smaller of the policy's default and 30 s. */
export function watchTimeoutMs(watch: Watch, defaultTimeoutMs: number): number {
  return watch.timeoutMs ?? Math.min(defaultTimeoutMs, WATCH_TIMEOUT_MS);
}

/** Whether a record is of a call that failed (threw or timed out: it has an evidence rule), not of a check. */
export function watchCallFailed(record: WatchRecord): boolean {
  return record.evidence !== undefined;
}

/** When each assumption's watcher was last called (ms on the run's clock), from the records. */
export function lastWatched(records: readonly WatchRecord[]): Map<string, number> {
  const last = new Map<string, number>();
  for (const r of records) last.set(r.assumptionId, Date.parse(r.at));
  return last;
}

/** The assumptions whose watcher's last call, in the records, failed. */
export function lastWatchFailed(records: readonly WatchRecord[]): Set<string> {
  const failed = new Set<string>();
  for (const r of records)
    if (watchCallFailed(r)) failed.add(r.assumptionId);
    else failed.delete(r.assumptionId);
  return failed;
}

/**
 * The watchers due before `step` starts: its assumptions that are watched, not falsified, not watched already in
 * this executor visit (`seen`), and whose last call was `everyMs` or longer ago (or never, or later than `now`: the
 * run's clock stepped back); when that call failed (`failed`), `WATCH_RETRY_AFTER_FAILURE_MS` or `everyMs`,
 * whichever is longer. With `everyMs` 0 every step resting on the assumption is watched, whatever the clock does.
 */
export function dueWatches(
  step: Step,
  watched: ReadonlyMap<string, WatchedAssumption>,
  falsified: readonly string[],
  last: ReadonlyMap<string, number>,
  seen: ReadonlySet<string>,
  now: number,
  failed: ReadonlySet<string> = new Set(),
): WatchedAssumption[] {
  const due: WatchedAssumption[] = [];
  for (const id of step.assumptions ?? []) {
    const a = watched.get(id);
    if (a === undefined || seen.has(id) || falsified.includes(id)) continue;
    const at = last.get(id);
    const every = a.watch.everyMs ?? 0;
    const wait = failed.has(id) ? Math.max(every, WATCH_RETRY_AFTER_FAILURE_MS) : every;
    // A clock that went back (an NTP step) cannot say how long ago the last call was: it is due.
    if (at === undefined || now < at || now - at >= wait) due.push(a);
  }
  return due;
}

/**
 * What a watcher's output says: the assumption holds, or it drifted; a check that cannot be evaluated (a missing
 * fact, a field the output lacks) says nothing, like a watcher that threw.
 */
export function judgeWatch(
  a: WatchedAssumption,
  output: unknown,
  trusted: Readonly<Record<string, unknown>>,
  tooLarge = false,
): { held: boolean } | { unreadable: string } {
  if (tooLarge)
    return {
      unreadable:
        `watcher ${a.watch.tool} of assumption ${JSON.stringify(a.id)} answered over ` +
        `${LIMITS.maxJsonBytes.toLocaleString("en-US")} bytes of JSON (the limit on stored evidence), so its check ` +
        `${a.watch.check} cannot read it and drift is not detected; the step starts on the assumption as it stood. ` +
        "Have the watcher answer only the fields its check reads",
    };
  const result = evaluate(a.watch.check, "watch", trusted, output);
  if (!result.ok)
    return { unreadable: `watch check ${JSON.stringify(a.watch.check)} could not be evaluated: ${result.message}` };
  if (typeof result.value !== "boolean")
    return {
      unreadable: `watch check ${JSON.stringify(a.watch.check)} gave ${JSON.stringify(result.value)}, not a boolean`,
    };
  return { held: result.value };
}

/**
 * The record of a watcher whose answer its check could not read: the step starts unwatched, and the decision
 * says so (docs/decisions/0041-evidence-freshness-and-drift.md). Only the first of a run of such answers for an
 * assumption is recorded (`previousUnreadable`): a watcher that always answers too much would otherwise add a
 * decision per step.
 */
export function unreadableVerdict(unreadable: string) {
  const reason = unreadable.includes("drift is not detected")
    ? unreadable
    : `${unreadable}: drift is not detected; the step starts on the assumption as it stood`;
  return { rule: "assumption.watch-unreadable", failureClass: "unknown", reason } as const;
}

/** Whether a record is of a check that could not read its watcher's answer. */
export function watchUnreadable(record: WatchRecord | undefined): boolean {
  return record?.error?.name === WATCH_UNREADABLE;
}

/** The error name a record of an unreadable check carries. */
export const WATCH_UNREADABLE = "WatchCheckUnreadable";

/** The deviation of a drifted assumption, named before `stepId` starts, with the watcher's output as evidence. */
export function driftDeviation(a: WatchedAssumption, stepId: string, output: unknown): Deviation {
  const message =
    `assumption "${a.id}" (${a.statement}) drifted before step "${stepId}" started: ` +
    `watcher ${a.watch.tool} check ${JSON.stringify(a.watch.check)} is false`;
  return {
    kind: "assumption_broken",
    stepId,
    attempt: 0,
    assumptionId: a.id,
    message,
    watch: { tool: a.watch.tool },
    error: { name: "AssumptionDrift", message, assumptionId: a.id, evidence: output },
  };
}
