/**
 * The plan manager as a service for agents (docs/decisions/0037-planning-service-over-mcp.md): a
 * plan is a thread of one of the served graphs, run in the background by this process; every
 * answer is read from the thread's latest checkpoint, so a restarted service finds each plan where
 * it was. Transport-free: src/mcp/server.ts puts these methods behind MCP tools. Each concern has
 * its own file (creates, reads, answers, listing, take-up); this class holds them together.
 */
import { PlanManagerError } from "../errors.js";
import { deleteThread as deleteUnlessHeld } from "../graph/process-claim.js";
import { threadLetGo } from "../graph/thread-lock.js";
import { archiveThread, deleteThread, unarchiveThread } from "../graph/retention.js";
import type { InterruptPayload } from "../plan/schema/interrupts.js";
import { originalSaver } from "../storage/index.js";
import { answerPlan, nextSteps, resumePlan, stopPlan, submitStep } from "./answers.js";
import { PlanCreates } from "./creates.js";
import { PlanElicitations } from "./elicitations.js";
import { listPlans, planReport } from "./listing.js";
import { PlanThreads, SEPARATOR } from "./plan-threads.js";
import { readStatus, waitFor } from "./reads.js";
import type { CreateInput, Created, ListInput, Listed, PlanServiceOptions, SubmitInput } from "./service-types.js";
import type { PlanStatus, StatusValues } from "./status.js";
import { takeUpPlan } from "./take-up.js";

export type {
  CreateInput,
  Created,
  ListInput,
  Listed,
  PlanServiceOptions,
  ServedGraph,
  SubmitInput,
} from "./service-types.js";
export { MAX_WAIT_S } from "./reads.js";
export { pendingOf, statusOf } from "./summaries.js";

/**
 * The planning service: the MCP tools as methods, with no transport. Runs belong to the service's database,
 * not to a client (docs/guides/mcp.md).
 */
export class PlanService {
  readonly server: Created["server"];
  private readonly threads: PlanThreads;
  private readonly creates: PlanCreates;
  /** The questions asked of clients' users through elicitation (elicitations.ts); `enabled` false with `elicit: false`. */
  readonly elicitations: PlanElicitations;

  constructor(options: PlanServiceOptions) {
    const names = Object.keys(options.graphs);
    if (names.length === 0) throw new PlanManagerError("invalid_options", "the plan service needs at least one graph");
    for (const name of names)
      if (name.includes(SEPARATOR) || !/^[A-Za-z0-9_.-]+$/.test(name))
        throw new PlanManagerError(
          "invalid_options",
          `graph name "${name}" must use letters, digits, "_", "." or "-" and not contain "${SEPARATOR}"`,
          { path: `graphs.${name}` },
        );
    const dedupeWindowMs = options.dedupeWindowMs ?? 600_000;
    if (!(dedupeWindowMs >= 0))
      throw new PlanManagerError("invalid_options", `dedupeWindowMs must be ms ≥ 0, got ${dedupeWindowMs}`, {
        path: "dedupeWindowMs",
      });
    if (options.workers && !options.wakes)
      throw new PlanManagerError(
        "invalid_options",
        "workers needs wakes too (openPlanWakes on the same database): plan_wait hears of the workers' runs there",
        { path: "wakes" },
      );
    this.threads = new PlanThreads({
      graphs: options.graphs,
      saver: options.saver,
      now: options.now ?? Date.now,
      wakes: options.wakes,
      workers: options.workers,
    });
    this.server = { ...(options.server ?? { name: "langgraph-replan", version: "0" }), graphs: names };
    this.creates = new PlanCreates(this.threads, this.server, dedupeWindowMs);
    this.elicitations = new PlanElicitations(this.threads, options.elicit ?? true);
  }

  /** Starts a plan in the background, or returns the one the same key or request made (creates.ts). */
  create(input: CreateInput): Promise<Created> {
    return this.creates.create(input);
  }

  status(planId: string): Promise<PlanStatus> {
    return readStatus(this.threads, planId);
  }

  /** Waits until the plan's run ends or needs an answer (woken by the run, not by polling), at most `timeoutS`. */
  wait(planId: string, timeoutS?: number): Promise<PlanStatus & { timed_out: boolean }> {
    return waitFor(this.threads, planId, timeoutS);
  }

  /**
   * Answers the pending question, checked like `resumeRun` before anything is written; the run carries
   * on in the background. `asked` (a question's key, elicitations.ts) refuses the answer when the plan
   * no longer waits on that question: the answer that came first won.
   */
  async answer(planId: string, answer: unknown, asked?: string): Promise<{ plan_id: string; status: string }> {
    const answered = await answerPlan(this.threads, planId, answer, asked);
    this.elicitations.answered(planId);
    return answered;
  }

  /** The external steps ready for the calling agent (docs/decisions/0042-external-steps.md). */
  next(planId: string): Promise<{ plan_id: string; status: string; steps: InterruptPayload[] }> {
    return nextSteps(this.threads, planId);
  }

  /** The calling agent's result for an external step, checked like every answer before anything is written. */
  async submit(planId: string, input: SubmitInput): Promise<{ plan_id: string; status: string }> {
    const submitted = await submitStep(this.threads, planId, input);
    this.elicitations.answered(planId);
    return submitted;
  }

  /** Stops the plan at its next step boundary with no call in flight (resumable with `resume`). */
  stop(planId: string, reason?: string): Promise<PlanStatus> {
    return stopPlan(this.threads, planId, reason);
  }

  /** Carries a stopped plan on, or one whose run this process no longer drives (a restart, a crash). */
  resume(planId: string): Promise<{ plan_id: string; status: string }> {
    return resumePlan(this.threads, planId);
  }

  /** Takes up a plan whose run no live process holds (take-up.ts says which ones and what each answer means). */
  takeUp(planId: string): Promise<"started" | "held" | "idle" | "skipped"> {
    return takeUpPlan(this.threads, planId);
  }

  /** Plans newest first, a page at a time; `status` keeps only those; archived ones only when asked. */
  list(input: ListInput = {}): Promise<Listed> {
    return listPlans(this.threads, input);
  }

  /** The plan's report: its metrics and lines as JSON, or the same as Markdown. */
  report(planId: string, format: "json" | "markdown" = "json"): Promise<{ format: string; report: unknown }> {
    return planReport(this.threads, planId, format);
  }

  /** Deletes the plan's checkpoints, writes and marks; a plan whose run is going on refuses with `thread_busy`. */
  async delete(planId: string): Promise<{ plan_id: string; deleted: true }> {
    const snapshot = await this.threads.existing(planId);
    this.threads.notRunning(planId);
    await this.notWithWorkers(planId);
    // A create's row with no checkpoint yet goes under the thread's claim: a run still starting refuses it.
    if ((snapshot.values as StatusValues | undefined)?.status === undefined)
      await deleteUnlessHeld(this.threads.saver, planId);
    else await deleteThread(this.threads.saver, planId);
    this.threads.runs.forget(planId);
    this.threads.parents.delete(planId);
    this.elicitations.forget(planId);
    return { plan_id: planId, deleted: true };
  }

  /** A plan handed to workers whose run is going on (or whose job waits in the queue) is not deleted under them. */
  private async notWithWorkers(planId: string): Promise<void> {
    if (!this.threads.workers || (await this.threads.core(planId)).running !== true) return;
    throw new PlanManagerError(
      "thread_busy",
      `plan "${planId}" is running on a worker, or its job waits in the queue: plan_stop it first, then delete it`,
    );
  }

  /** Leaves the plan out of `list` unless asked (`archived`), or brings it back; nothing is deleted. */
  async archive(planId: string, archived = true): Promise<{ plan_id: string; archived: boolean }> {
    await this.threads.existing(planId);
    if (archived) await archiveThread(this.threads.saver, planId, { now: this.threads.now() });
    else await unarchiveThread(this.threads.saver, planId);
    return { plan_id: planId, archived };
  }

  /** Ends the runs this process drives where they stand (a shutdown); their threads carry on with `resume`. */
  async close(): Promise<void> {
    this.threads.runs.pauseAll();
    await this.settled();
  }

  /**
   * Ends the runs this process drives at their next step boundary, sooner than `close` (a SIGTERM,
   * with a kill to follow): read-only calls in flight are cut, side-effecting ones run to their end,
   * and every result is checkpointed before this resolves (docs/decisions/0028-a-stopped-run-keeps-its-results.md).
   * The plans stay `running` for a server on the same database to take up.
   */
  async halt(): Promise<void> {
    const halted = this.threads.runs.abortAll();
    await this.threads.runs.settled();
    const checkpointer = originalSaver(this.threads.saver);
    await Promise.all(halted.map((threadId) => threadLetGo({ checkpointer, threadId, namespace: "" })));
    await Promise.all(this.threads.writing.values());
  }

  /** Lets the runs this process drives reach their next checkpoint (for a clean shutdown and tests). */
  settled(): Promise<void> {
    return this.threads.settled();
  }
}
