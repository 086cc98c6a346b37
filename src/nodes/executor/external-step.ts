/**
 * An external step offered to the calling agent (docs/decisions/0042-external-steps.md): the checks
 * before an attempt and the operation's key (`beforeAttempt`, `effectKey`, as for a tool's call), then
 * the question the human node raises (its own writes are discarded while it waits, so everything the
 * agent sees is written here). The offer is the attempt's intent in the effect journal; a result the
 * journal already holds for the key (a fork from before the submit) is the step's, and nothing is asked.
 */
import type { PlanManagerUpdate } from "../../runtime/state.js";
import type { Step } from "../../plan/schema/step.js";
import type { StepRun } from "../../plan/schema/run.js";
import { externalCall } from "../../policy/attempt/external.js";
import { attemptCost } from "../../policy/ladder/budget.js";
import { externalStepPayload } from "../../runtime/interrupts.js";
import { journalOf } from "../../runtime/effect-journal.js";
import type { Flight } from "../../runtime/dispatch.js";
import { checkBefore, recordEnd, reuseEffect } from "./start-attempt.js";
import type { Visit } from "./visit.js";
import { withoutApproval } from "../../policy/attempt/approval.js";

/** What the visit returns for a ready external step: its question, or what the checks or the journal settled. */
export async function externalStep(v: Visit, step: Step): Promise<PlanManagerUpdate | undefined> {
  const previous: StepRun = v.steps[step.id] ?? { status: "pending", attempts: 0 };
  // Offered before and not answered (a stop at the question, a scope change it waited through): the same attempt.
  const again = previous.status === "running";
  const threadId = String(v.config.configurable?.thread_id ?? "no-thread");
  const call = externalCall(step, v.trusted);
  const charge = attemptCost(step, false);
  const next = checkBefore(v, step, { threadId, tool: call.tool, args: call.args, charge, again });
  if (next.kind === "refused") {
    v.fail(step, next.failure, { ...previous, status: "failed" });
    return undefined;
  }
  if (next.kind === "reuse") {
    reuseEffect(v, step, previous, next.reuse, next.output, call.tool);
    return undefined;
  }
  const { key } = next;
  const attempt = again ? previous.attempts : previous.attempts + 1;
  const at = v.now();
  const journal = key ? journalOf(v.config) : undefined;
  if (journal && key) {
    const entry = await journal.lookup(threadId, key);
    if (entry?.result?.ok) {
      // The agent's submit is on record under this key (another branch of the thread): it is not asked again.
      const flight: Flight = { call: { stepId: step.id, tool: call.tool }, attempt, startedAt: at, key };
      Object.assign(flight, { result: { ok: true, output: entry.result.output }, effect: "journaled" });
      v.write(step.id, { ...previous, status: "running", attempts: attempt, startedAt: at });
      recordEnd(v, flight);
      return undefined;
    }
    await journal.intent(threadId, { key, stepId: step.id, tool: call.tool, args: call.args, attempt, at });
  }
  const { nextDelayMs: delay, error, ...rest } = withoutApproval(previous);
  const cost = again ? 0 : charge;
  v.spent += cost;
  v.write(step.id, {
    ...rest,
    status: "running",
    attempts: attempt,
    startedAt: again ? (previous.startedAt ?? at) : at,
    ...(cost > 0 ? { cost: (previous.cost ?? 0) + cost } : {}),
  });
  if (!again)
    v.send({ type: "step_started", stepId: step.id, goal: step.goal, attempt, tool: "<external>", running: 0 });
  const pendingHuman = externalStepPayload(
    v.plan.version,
    step,
    {
      goal: v.state.goal,
      inputs: call.inputs,
      produces: step.produces ?? [],
      ...(step.successSignal !== undefined ? { successSignal: step.successSignal } : {}),
      attempt,
      ...(error ? { previousError: error.message } : {}),
      ...(delay ? { retryAfterMs: delay } : {}),
      ...(key ? { idempotencyKey: key, sideEffects: step.sideEffects ?? [] } : {}),
    },
    v.rt.canReplan,
  );
  return { ...v.update(), deviation: null, status: "awaiting_human", pendingHuman };
}

/** The step is offered to the calling agent (its fallback, once the ladder switched to it, is a tool the manager runs). */
export function offeredToCaller(step: Step, run: StepRun | undefined): boolean {
  return step.external !== undefined && !(run?.usedFallback === true && step.fallback !== undefined);
}
