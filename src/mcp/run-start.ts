/**
 * How the plan service starts a run in the background on a plan's thread, and what it writes
 * around it: a status row saying a run is going on once the run holds the thread, and the row of
 * the checkpoint the run left when it returns (docs/decisions/0037-planning-service-over-mcp.md).
 * While it runs, its stream keeps its status in memory (docs/decisions/0066-live-status-of-running-plans.md).
 */
import type { LangGraphRunnableConfig, StateSnapshot } from "@langchain/langgraph";
import { CALLS_HELD } from "../runtime/run-control.js";
import { withValuesTap } from "../runtime/values-tap.js";
import { saverAdapter } from "../storage/index.js";
import type { PlanThreads } from "./plan-threads.js";
import type { ServedGraph } from "./service-types.js";
import { noPlan, runningFrom, startedFrom, type Summary } from "./summaries.js";
import { handOff, type WorkerJob } from "./worker-runs.js";

export type PlanRun = (graph: ServedGraph, config: LangGraphRunnableConfig) => Promise<unknown>;

/**
 * Runs in the background, and resolves once the run holds the plan's thread (in the database on
 * SQLite and PostgreSQL): until then another process may still take or delete it, and "running"
 * would not be true. What refused the run then (the thread busy elsewhere, or deleted: an unknown
 * plan; `whenHeld`) is this call's error, and nothing was written. Once held, and before the run
 * writes anything, a status row says that a run is going on from `from`, so that a service in
 * another process does not answer a wait with the question being answered, nor "no plan" before
 * the first checkpoint. When the run returns (or throws, or pauses), and before it counts as
 * settled, the status of the thread's latest checkpoint is stored beside it for `status`, `wait`
 * and `list` to read in one lookup. The row is read from the checkpoint itself and keyed by its
 * id, so it is right for that checkpoint whatever wrote it; a later checkpoint makes it stale, and
 * readers then read the checkpoint again. A service whose runs workers drive (`workers`) does what
 * `job` says through their queue instead (mcp/worker-runs.ts), once `whenHeld` did not refuse it.
 */
export async function beginRun(
  threads: PlanThreads,
  planId: string,
  from: { checkpointId: string; summary: Summary } | undefined,
  job: WorkerJob,
  run: PlanRun,
  whenHeld?: () => Promise<void>,
): Promise<void> {
  if (threads.workers) {
    await whenHeld?.();
    return handOff(threads, threads.workers, planId, from, job);
  }
  threads.ending.delete(planId);
  const graph = threads.graphOf(threads.graphNameOf(planId));
  const store = saverAdapter(threads.saver).statuses;
  const held = threads.runs.start(
    planId,
    graph,
    async (g, config) => {
      try {
        return await run(
          g,
          withValuesTap(
            config,
            threads.live.tap(planId, () => threads.runs.holds(planId)),
          ),
        );
      } finally {
        threads.live.forget(planId);
        // A run refused before it held the thread wrote nothing, and has no row to write.
        // An optimisation only: a row that could not be written leaves readers on the checkpoint.
        if (threads.runs.holds(planId)) await threads.storeStatus(planId).catch(() => undefined);
      }
    },
    {
      callsHeld: (graph as Partial<Record<typeof CALLS_HELD, unknown>>)[CALLS_HELD] === true,
      whenHeld: async () => {
        // The row first, so that a create in another process refused by this run's claim finds it
        // sooner; a row written for a create that `whenHeld` then refuses is ignored, as the thread
        // has a checkpoint, which a row with no checkpoint cannot describe.
        if (store && from)
          await store
            .write(planId, { checkpointId: from.checkpointId, summary: JSON.stringify(runningFrom(from.summary)) })
            .catch(() => undefined);
        await whenHeld?.();
      },
    },
  );
  await held;
}

/** `beginRun` for a plan that exists: one deleted since it was read (here or by another process) is an unknown plan, as it now is. */
export async function carryOn(
  threads: PlanThreads,
  planId: string,
  snapshot: StateSnapshot,
  job: WorkerJob,
  run: PlanRun,
): Promise<void> {
  await beginRun(threads, planId, startedFrom(snapshot), job, run).catch(async (error: unknown) => {
    if (!(await threads.stillThere(planId))) throw noPlan(planId);
    throw error;
  });
}
