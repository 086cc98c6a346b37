/**
 * A server takes up a plan whose run no live process holds (docs/decisions/0037-planning-service-over-mcp.md,
 * "Runs outlive their server"; mcp/recovery.ts asks at launch and on an interval).
 */
import { isPlanManagerError } from "../errors.js";
import type { PlanThreads } from "./plan-threads.js";
import { beginRun } from "./run-start.js";
import { runGoingOn } from "./status.js";
import { startedFrom } from "./summaries.js";

/**
 * Takes up a plan whose run no live process holds — its server was closed or killed mid-step — the
 * way `resume` carries a plan on, so a call cut in flight is settled through the effect journal.
 * Not a plan that ended, was stopped, waits for an answer or at a static breakpoint of its graph,
 * one a create left before its first checkpoint (nothing to carry on from: `plan_create` starts it
 * again), one a live process holds, nor one whose run threw in this process (`plan_resume` retries
 * that), nor any on a saver whose claims reach this process only (who else runs it cannot be told).
 * Two servers asking at once: the run's own claim lets one in, and the other's run ends at once.
 * `"started"`: this process runs it now; `"held"`: a live process holds it; `"idle"`: the checkpoint
 * shows nothing to take up; `"skipped"`: this process runs it, or its run threw here.
 */
export async function takeUpPlan(
  threads: PlanThreads,
  planId: string,
): Promise<"started" | "held" | "idle" | "skipped"> {
  // Workers take up their own threads: a job whose worker died is handed out again after its lease.
  if (!threads.servedGraphOf(planId) || threads.workers) return "idle";
  if (threads.runs.has(planId) || threads.runs.failure(planId)) return "skipped";
  // Asked first: a run going on elsewhere is not read (a long plan's checkpoint costs a replay).
  const live = await threads.held(planId);
  if (live !== false) return live ? "held" : "idle";
  const core = await threads.core(planId).catch((error: unknown) => {
    // A thread with no plan in it yet (cut before its first status): nothing the service can name.
    if (isPlanManagerError(error) && error.code === "invalid_input") return undefined;
    throw error;
  });
  if (!core || !runGoingOn(core)) return "idle";
  const snapshot = await threads.snapshot(planId);
  // A create cut before its first checkpoint has no input to carry on from: plan_create starts it again.
  if (startedFrom(snapshot) === undefined || (await threads.atBreakpoint(planId, snapshot))) return "idle";
  if (threads.runs.has(planId)) return "skipped";
  try {
    // Resolves once the run holds the thread; another server's claim refuses it with thread_busy.
    await beginRun(threads, planId, startedFrom(snapshot), { kind: "carry_on" }, (graph, config) =>
      graph.invoke(null, config),
    );
  } catch (error) {
    if (isPlanManagerError(error) && error.code === "thread_busy") return "held";
    throw error;
  }
  return "started";
}
