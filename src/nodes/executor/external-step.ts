/**
 * One external step offered to the calling agent (docs/decisions/0042-external-steps.md): the checks
 * before an attempt and the operation's key (`beforeAttempt`, `effectKey`, as for a tool's call), then
 * what the question says of it (`offer-external.ts` asks the question, listing every step offered).
 * The offer is the attempt's intent in the effect journal; a result the journal already holds for the
 * key (a fork from before the submit) is the step's, and nothing is asked. A step offered before and
 * not answered (a sibling was submitted, a stop, a scope change waited through) is offered again as
 * the same attempt, under the same key and intent, with the same reasons: its record keeps them.
 */
import type { Step } from "../../plan/schema/step.js";
import type { StepRun } from "../../plan/schema/run.js";
import type { ExternalOffer } from "../../plan/schema/interrupts.js";
import { externalCall } from "../../policy/attempt/external.js";
import { attemptCost } from "../../policy/ladder/budget.js";
import { journalOf } from "../../runtime/effect-journal.js";
import type { Flight } from "../../runtime/dispatch.js";
import { checkBefore, recordEnd, reuseEffect } from "./start-attempt.js";
import type { Visit } from "./visit.js";
import { withoutApproval } from "../../policy/attempt/approval.js";

/** What the question says of a ready (or still offered) external step, or undefined when the checks or the journal settled it. */
export async function offerStep(v: Visit, step: Step): Promise<ExternalOffer | undefined> {
  const previous: StepRun = v.steps[step.id] ?? { status: "pending", attempts: 0 };
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
    // Offered before and not answered: its intent is on record already.
    if (!again || entry?.attempt !== attempt)
      await journal.intent(threadId, { key, stepId: step.id, tool: call.tool, args: call.args, attempt, at });
  }
  // The record keeps why the last attempt was sent back and the backoff asked, so an offer made again says the same.
  const { nextDelayMs: delay, error } = previous;
  const cost = again ? 0 : charge;
  v.spent += cost;
  const offered: StepRun = {
    ...withoutApproval(previous),
    status: "running",
    attempts: attempt,
    startedAt: again ? (previous.startedAt ?? at) : at,
    ...(cost > 0 ? { cost: (previous.cost ?? 0) + cost } : {}),
  };
  // An offer made again writes nothing when its record stands as it was: each submission re-offers the rest.
  if (!again || !sameRecord(offered, previous)) v.write(step.id, offered);
  if (!again)
    v.send({ type: "step_started", stepId: step.id, goal: step.goal, attempt, tool: "<external>", running: 0 });
  return {
    step: { id: step.id, goal: step.goal, instructions: step.external!.instructions },
    inputs: call.inputs,
    produces: step.produces ?? [],
    ...(step.successSignal !== undefined ? { successSignal: step.successSignal } : {}),
    attempt,
    ...(error ? { previousError: error.message } : {}),
    ...(delay ? { retryAfterMs: delay } : {}),
    ...(key ? { idempotencyKey: key, sideEffects: step.sideEffects ?? [] } : {}),
  };
}

/** The step is offered to the calling agent (its fallback, once the ladder switched to it, is a tool the manager runs). */
export function offeredToCaller(step: Step, run: StepRun | undefined): boolean {
  return step.external !== undefined && !(run?.usedFallback === true && step.fallback !== undefined);
}

function sameRecord(a: StepRun, b: StepRun): boolean {
  const keys = Object.keys(a) as (keyof StepRun)[];
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
