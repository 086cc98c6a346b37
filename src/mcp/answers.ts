/**
 * What changes a plan's run from outside: an answer to its question (`plan_answer`), an external
 * step's result (`plan_next` / `plan_submit`, docs/decisions/0042-external-steps.md), an operator's
 * stop, and a resume. Each is checked before anything is written; the run carries on in the background.
 */
import { PlanManagerError } from "../errors.js";
import { answerProblemFor, resumeRun } from "../graph/resume-run.js";
import type { InterruptPayload, ResumeValue } from "../plan/schema/interrupts.js";
import { ResumeValueSchema } from "../plan/schema/interrupts.js";
import { offersOf } from "../plan/external-offers.js";
import { reopenStopped, requestStop } from "../worker/stop-run.js";
import { questionKey } from "./elicitations.js";
import type { PlanThreads } from "./plan-threads.js";
import { readStatus } from "./reads.js";
import { carryOn } from "./run-start.js";
import type { SubmitInput } from "./service-types.js";
import { resumeJob } from "./worker-runs.js";
import type { PlanStatus, StatusValues } from "./status.js";
import { FINISHED, pendingOf, statusOf } from "./summaries.js";

/** How long `stop` waits for a run in a long call to reach its boundary before it answers. */
const STOP_WAIT_MS = 10_000;

/** Answers the pending question, checked like `resumeRun` before anything is written; the run carries on in the background. */
export async function answerPlan(
  threads: PlanThreads,
  planId: string,
  answer: unknown,
  asked?: string,
): Promise<{ plan_id: string; status: string }> {
  const snapshot = await threads.existing(planId);
  threads.notRunning(planId);
  const pending = pendingOf(snapshot);
  if (!pending)
    throw new PlanManagerError(
      "invalid_resume",
      `plan "${planId}" has no pending question (status: ${statusOf(snapshot, false)})` +
        ((snapshot.values as StatusValues).status === "stopped"
          ? ": it was stopped; carry it on with plan_resume"
          : ""),
    );
  if (asked !== undefined && questionKey(pending) !== asked)
    throw new PlanManagerError(
      "invalid_resume",
      `plan "${planId}": the question asked was answered already; it now waits on another (plan_status shows it)`,
      { path: "question" },
    );
  const parsed = ResumeValueSchema.safeParse(answer);
  if (!parsed.success)
    throw new PlanManagerError(
      "invalid_resume",
      `plan "${planId}": not an answer (${parsed.error.issues[0]?.message ?? "malformed"}); expected { action, … }`,
      { path: "answer" },
    );
  const problem = answerProblemFor(parsed.data, pending, (snapshot.values ?? {}) as never);
  if (problem)
    throw new PlanManagerError("invalid_resume", `plan "${planId}", ${pending.kind}: ${problem}`, { path: "answer" });
  const value: ResumeValue = parsed.data;
  const job = resumeJob(snapshot, value);
  await carryOn(threads, planId, snapshot, job, (graph, config) => resumeRun(graph, config, value));
  return { plan_id: planId, status: "running" };
}

/**
 * The external steps ready for the calling agent, each as the question of one step (goal,
 * instructions, trusted inputs, success signal, attempt, idempotency key): every step the plan's
 * question offers, any of which plan_submit takes; none while the run is going or asks something else.
 */
export async function nextSteps(
  threads: PlanThreads,
  planId: string,
): Promise<{ plan_id: string; status: string; steps: InterruptPayload[] }> {
  const core = await threads.core(planId);
  // A run another service started from this checkpoint is answering its question already.
  const running = threads.runs.has(planId) || core.running === true;
  const pending = running ? undefined : core.question;
  const steps = pending?.kind === "external_step" ? stepQuestions(pending) : [];
  return { plan_id: planId, status: statusOf(core.stored, running), steps };
}

/**
 * One question per step offered, shaped as the question of a plan that offers that step alone. `skip`
 * names no step and skips the question's own (the first), so only the first step's entry offers it.
 */
function stepQuestions(question: Extract<InterruptPayload, { kind: "external_step" }>): InterruptPayload[] {
  const { goal } = question.context;
  return offersOf(question).map((offer) => ({
    ...question,
    stepId: offer.step.id,
    reason: offer.step.instructions,
    ...(offer.step.id === question.stepId ? {} : { options: question.options.filter((o) => o !== "skip") }),
    context: { goal, ...offer },
  }));
}

/**
 * The calling agent's result for an external step: its output or the error it met, checked like
 * every answer before anything is written (`resumeRun`'s checks); the ladder answers it as the run
 * carries on in the background.
 */
export function submitStep(
  threads: PlanThreads,
  planId: string,
  input: SubmitInput,
): Promise<{ plan_id: string; status: string }> {
  const { step_id: stepId, output, error } = input;
  return answerPlan(threads, planId, {
    action: "submit",
    stepId,
    ...(output !== undefined ? { output } : {}),
    ...(error !== undefined ? { error } : {}),
  });
}

/**
 * Stops the plan at its next step boundary with no call in flight (resumable with `resume`): a
 * run this process drives takes the stop itself, as a worker's does; a paused one is stopped in
 * its checkpoint.
 */
export async function stopPlan(threads: PlanThreads, planId: string, reason?: string): Promise<PlanStatus> {
  await threads.existing(planId);
  // A worker's run takes a stop request at its next step boundary, as it does the command line's.
  if (threads.workers) {
    await threads.workers.requestStop(planId, reason, () => stopIdle(threads, planId, reason));
    return readStatus(threads, planId);
  }
  const stop = { requestedAt: new Date(threads.now()).toISOString(), ...(reason ? { reason } : {}) };
  // The stop is taken once no call is in flight; a long call keeps the answer "running" until then.
  if ((await threads.runs.ask(planId, { kind: "stop", stop }, STOP_WAIT_MS)) === false)
    return readStatus(threads, planId);
  await stopIdle(threads, planId, reason);
  return readStatus(threads, planId);
}

/** Stops a plan no run holds in its checkpoint, unless it has stopped or ended already. */
async function stopIdle(threads: PlanThreads, planId: string, reason?: string): Promise<void> {
  const snapshot = await threads.snapshot(planId);
  const status = (snapshot.values as StatusValues).status;
  if (status !== "stopped" && !FINISHED.has(status ?? ""))
    await requestStop(threads.graphOf(threads.graphNameOf(planId)), threads.configOf(planId), {
      ...(reason ? { reason } : {}),
      now: threads.now,
    }).finally(() => threads.storeStatus(planId).catch(() => undefined));
}

/** Carries a stopped plan on, or one whose run this process no longer drives (a restart, a crash). */
export async function resumePlan(threads: PlanThreads, planId: string): Promise<{ plan_id: string; status: string }> {
  const snapshot = await threads.existing(planId);
  threads.notRunning(planId);
  const status = (snapshot.values as StatusValues).status;
  if (status === undefined)
    throw new PlanManagerError(
      "invalid_resume",
      `plan "${planId}" has no checkpoint yet: its run is starting (plan_wait for it), or its server stopped ` +
        "before the first one (plan_delete it and create it again)",
    );
  // A run that ended but still has work queued (undoing abandoned effects) carries on like any other.
  if (FINISHED.has(status ?? "") && snapshot.next.length === 0)
    throw new PlanManagerError(
      "thread_finished",
      `plan "${planId}" has finished (status: ${status}): there is nothing to resume`,
    );
  if (pendingOf(snapshot) && status !== "stopped")
    throw new PlanManagerError("invalid_resume", `plan "${planId}" waits for an answer: use plan_answer`);
  const job = { kind: status === "stopped" ? "resume_stopped" : "carry_on" } as const;
  await carryOn(threads, planId, snapshot, job, async (graph, config) => {
    if (status !== "stopped") return graph.invoke(null, config);
    // The run keeps this service's control (a stop, a pause at shutdown, the hold it answers after).
    const reopened = await reopenStopped(graph, config);
    return graph.invoke(null, { ...config, configurable: { ...config.configurable, ...reopened.configurable } });
  });
  return { plan_id: planId, status: "running" };
}
