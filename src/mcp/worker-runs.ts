/**
 * A plan service whose runs `createWorker` processes drive (docs/decisions/0074-workers-wake-plan-waits.md):
 * instead of running a create, an answer or a resume here, the service writes the plan's status row
 * (a run is going on) and puts a job on the workers' queue; the worker announces the thread when its
 * run ends, parks at a question or stops, and `plan_wait` is woken by that (mcp/wakes.ts).
 */
import type { StateSnapshot } from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";
import type { ResumeValue } from "../plan/schema/interrupts.js";
import type { PlanManagerInputType } from "../runtime/state.js";
import { saverAdapter } from "../storage/index.js";
import type { PlanThreads } from "./plan-threads.js";
import type { PlanQueue } from "./service-types.js";
import { runningFrom, type Summary } from "./summaries.js";

/**
 * What a run started by the service does, said so that a worker can do it: start from an input,
 * answer the question `interruptId` names, reopen a stopped plan, or carry on from the checkpoint.
 */
export type WorkerJob =
  | { kind: "run"; input: PlanManagerInputType }
  | { kind: "resume"; value: ResumeValue; interruptId?: string }
  | { kind: "resume_stopped" }
  | { kind: "carry_on" };

/** The job that answers the question the checkpoint waits on (a copy of it answers nothing later). */
export function resumeJob(snapshot: StateSnapshot, value: ResumeValue): WorkerJob {
  const interruptId = snapshot.tasks.flatMap((t) => t.interrupts ?? [])[0]?.id;
  return { kind: "resume", value, ...(interruptId !== undefined ? { interruptId } : {}) };
}

/**
 * Hands the run to the workers: the status row first, so that a wait started now waits for the
 * worker's announcement instead of answering with the checkpoint the job has not moved yet; then
 * the job. Nothing here holds the thread: the worker's run claims it as it starts.
 */
export async function handOff(
  threads: PlanThreads,
  queue: PlanQueue,
  planId: string,
  from: { checkpointId: string; summary: Summary } | undefined,
  job: WorkerJob,
): Promise<void> {
  const store = saverAdapter(threads.saver).statuses;
  if (!store)
    throw new PlanManagerError("invalid_options", "runs handed to workers need the PostgreSQL saver's status rows", {
      path: "workers",
    });
  if (from)
    await store.write(planId, { checkpointId: from.checkpointId, summary: JSON.stringify(runningFrom(from.summary)) });
  if (job.kind === "run") await queue.enqueueRun(planId, job.input);
  else if (job.kind === "resume") await queue.enqueueResume(planId, job.value, job.interruptId);
  else if (job.kind === "resume_stopped") await queue.enqueueResumeStopped(planId);
  // A run job on a started thread carries a cut run on from its checkpoint (worker/driver.ts).
  else await queue.enqueueRun(planId, {} as PlanManagerInputType);
}
