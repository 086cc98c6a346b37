/**
 * The calling agent's submission for an external step (docs/decisions/0042-external-steps.md),
 * recorded as the end of the offer's attempt, exactly as a tool call's end is (`recordEnd`): an output
 * is judged by the one attempt function (produced fields, success signal, assumption checks) and its
 * facts trusted; an error, or an output the judgement sends back, is queued for the classifier, whose
 * ladder answers it with the same rules as a tool's (a transient error offers the step again). A
 * side-effecting step's output commits its effect under the offer's key, in state and in the journal.
 * The question may offer several steps: the submission ends the one it names (`a.step`), and the
 * executor offers the others again, as they were.
 */
import { offerOf } from "../../plan/external-offers.js";
import type { ResumeValue } from "../../plan/schema/interrupts.js";
import { externalCall, submittedResult } from "../../policy/attempt/external.js";
import type { Flight } from "../../runtime/dispatch.js";
import { recordEnd } from "../executor/start-attempt.js";
import { Visit } from "../executor/visit.js";
import { running, type Answering, type Next } from "./answer-context.js";

export function submitExternal(a: Answering, reply: Extract<ResumeValue, { action: "submit" }>): Next {
  const { step, run } = a;
  const offer = step ? offerOf(a.pending, step.id) : undefined;
  if (!step || !run || !offer) return running();
  const v = new Visit(a.rt, a.state, a.config);
  // Its events wait for the checkpoint that holds the submission.
  v.settling = true;
  // The offer's record kept the backoff it asked the agent to wait; the attempt has ended.
  const { nextDelayMs: _waited, ...offered } = run;
  v.write(step.id, offered);
  const key = offer.idempotencyKey;
  const flight: Flight = {
    call: { stepId: step.id, tool: externalCall(step, v.trusted).tool },
    attempt: run.attempts,
    startedAt: run.startedAt ?? a.at,
    result: submittedResult(reply),
    ...(key !== undefined ? { key } : {}),
  };
  recordEnd(v, flight);
  const ended = v.changed[step.id];
  const next = running(v.update());
  return key !== undefined && ended?.status === "succeeded" ? { ...next, effect: { key, output: ended.output } } : next;
}
