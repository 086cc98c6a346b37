/**
 * `plan_status` and `plan_wait`: a plan's status from its latest checkpoint, with whether a live
 * process holds its run, and a wait woken by the run's end (here, or announced by another process).
 */
import { PlanManagerError } from "../errors.js";
import { saverAdapter } from "../storage/index.js";
import { cutRunStatus, breakpointMessage, inFlightOf, neverStartedMessage, threwHereMessage } from "./cut-run.js";
import type { PlanThreads } from "./plan-threads.js";
import { planStatus, runGoingOn, type PlanStatus, type StatusCore } from "./status.js";
import { startedFrom } from "./summaries.js";

/** The longest `plan_wait`, in seconds. */
export const MAX_WAIT_S = 300;

/**
 * A run this process drives is read from what its stream last showed (mcp/live-status.ts), which
 * is what its latest checkpoint holds; any other plan from its status row or checkpoint.
 */
export async function readStatus(threads: PlanThreads, planId: string): Promise<PlanStatus> {
  const live = threads.runs.has(planId) ? threads.live.core(planId) : undefined;
  const core = live ?? (await threads.core(planId));
  return withServer(threads, planId, core, statusFrom(threads, planId, core));
}

/**
 * A run going on says whether a live process holds it: this one, or another that holds its claim
 * in the database. One nobody holds was cut mid-step: its attempt in flight is shown (mcp/cut-run.ts).
 */
async function withServer(
  threads: PlanThreads,
  planId: string,
  core: StatusCore,
  status: PlanStatus,
): Promise<PlanStatus> {
  if (!runGoingOn(core)) return status;
  const live = await threads.held(planId);
  if (live === undefined) return status;
  if (live) return { ...status, server: { live: true } };
  // Handed to workers: a run no process holds is queued, or between a worker's steps; none is cut.
  if (threads.workers) return { ...status, server: { live: false } };
  const [snapshot, unsettled] = await Promise.all([
    threads.snapshot(planId),
    saverAdapter(threads.saver).journal.unsettled(planId),
  ]);
  // What `takeUp` would do with it, said plainly: only a cut run with a checkpoint is taken up.
  const message =
    startedFrom(snapshot) === undefined
      ? neverStartedMessage(planId)
      : threads.runs.failure(planId)
        ? threwHereMessage(planId)
        : (await threads.atBreakpoint(planId, snapshot))
          ? breakpointMessage(planId)
          : undefined;
  return cutRunStatus(status, inFlightOf(snapshot, unsettled), message);
}

function statusFrom(threads: PlanThreads, planId: string, core: StatusCore): PlanStatus {
  const parent = threads.parents.get(planId);
  const thrown = threads.runs.failure(planId);
  return planStatus(planId, threads.graphNameOf(planId), core, {
    running: threads.runs.has(planId),
    ...(parent ? { parentPlanId: parent } : {}),
    ...(thrown ? { thrown } : {}),
  });
}

/** Waits until the plan's run ends or needs an answer (woken by the run, not by polling), at most `timeoutS`. */
export async function waitFor(
  threads: PlanThreads,
  planId: string,
  timeoutS = 60,
): Promise<PlanStatus & { timed_out: boolean }> {
  if (!Number.isFinite(timeoutS) || timeoutS < 0 || timeoutS > MAX_WAIT_S)
    throw new PlanManagerError("invalid_input", `timeout_s must be a number from 0 to ${MAX_WAIT_S}, got ${timeoutS}`, {
      path: "timeout_s",
    });
  await threads.core(planId);
  const here = await threads.runs.waitFor(planId, timeoutS * 1000);
  const ended = here ?? (await waitElsewhere(threads, planId, timeoutS * 1000));
  // The run this process drove has just returned: its status was read as it did (`storeStatus`).
  const read = here === true ? threads.ending.get(planId) : undefined;
  const status = read
    ? await withServer(threads, planId, read, statusFrom(threads, planId, read))
    : await readStatus(threads, planId);
  return { ...status, timed_out: ended === false };
}

/**
 * Waits for a run another process drives, woken by its announcements (`wakes`): true once the
 * checkpoint shows it ended, stopped or waiting for an answer, false when `ms` ran out first;
 * undefined without `wakes`, when nothing could wake this wait.
 */
async function waitElsewhere(threads: PlanThreads, planId: string, ms: number): Promise<boolean | undefined> {
  if (!threads.wakes) return undefined;
  let wake!: () => void;
  let woken = new Promise<void>((resolve) => (wake = resolve));
  // Watching before the first read: an announcement sent between the read and the watch is not missed.
  const unwatch = threads.wakes.watch(planId, () => wake());
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    for (;;) {
      if (!runGoingOn(await threads.core(planId))) return true;
      if ((await Promise.race([woken.then(() => true as const), late])) === false) return false;
      woken = new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    unwatch();
    clearTimeout(timer);
  }
}
