/**
 * A person's `complete` answer to a human step: the output becomes the step's facts, unless the
 * step's deadline passed, in which case the deadline rule decides (not the person who answered late).
 */
import type { PendingHuman } from "../../runtime/state.js";
import { makeFacts, producedValues } from "../../plan/facts.js";
import type { StepRun } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import { deadlinePassed } from "../../policy/ladder/guards.js";
import type { RuleId } from "../../policy/ladder/rules.js";
import { answerRule } from "../../policy/ladder/person.js";
import { personDecision, running, type Answering, type Next } from "./answer-context.js";
import { ESCALATION_OPTIONS, offered } from "../../runtime/interrupts.js";
import { emitOnceDurable } from "../../runtime/events.js";

export function completeHumanStep(a: Answering, output: unknown): Next {
  const { step, run } = a;
  if (!step || !run) return running();
  const late =
    a.pending.kind === "human_step"
      ? deadlinePassed(a.pending.deadline, a.rt.clock.now(), step.id, step.human?.timeoutMs)
      : undefined;
  if (late) return lateAnswer(a, step, late.rule, late.reason, output);
  const { values, facts } = personsOutput(a, step, run, output);
  const done: StepRun = { ...run, status: "succeeded", attempts: run.attempts + 1, output, endedAt: a.at };
  const reason = `a person completed the step: ${Object.keys(values).join(", ") || "no facts"}`;
  return running({
    facts,
    decisions: personDecision(a, answerRule("complete"), reason),
    progress: { lastProgressAt: a.at },
    steps: { [step.id]: done },
    guards: { ...a.state.guards, successes: a.state.guards.successes + 1 },
  });
}

/** Escalate with the late answer attached, so a person sees what arrived after the deadline. */
function lateAnswer(a: Answering, step: Step, rule: RuleId, reason: string, output: unknown): Next {
  const decision = personDecision(a, rule, reason, { failureClass: "budget_exhausted", byPerson: false });
  const pendingHuman: PendingHuman = {
    kind: "escalation",
    reason,
    stepId: step.id,
    planVersion: a.state.plan?.version ?? 0,
    options: offered(["complete", ...ESCALATION_OPTIONS], a.rt.canReplan),
    context: { goal: a.state.goal, step: { id: step.id, goal: step.goal }, lateOutput: output, rule },
  };
  return { goto: "human", update: { decisions: decision, pendingHuman, status: "awaiting_human" } };
}

/**
 * A person's `happened` answer to a call in doubt: the call took effect and `output` is what it
 * returned. The step succeeds with it, and the effect is committed under its key, here and in the
 * effect journal (`Next.effect`), so no branch of the thread calls it again
 * (docs/decisions/0038-effect-journal.md).
 */
export function effectHappened(a: Answering, output: unknown): Next {
  const { step, run } = a;
  const doubt = a.pending.kind === "escalation" ? a.pending.context.inDoubt : undefined;
  if (!step || !run || !doubt) return running();
  const { facts } = personsOutput(a, step, run, output);
  const { error: _error, ...rest } = run;
  const done: StepRun = { ...rest, status: "succeeded", output, endedAt: a.at };
  const reason = `a person said ${doubt.tool} under key ${doubt.key} took effect; its output is recorded`;
  const effect = { stepId: step.id, idempotencyKey: doubt.key, at: a.at, ...(output !== undefined ? { output } : {}) };
  const known = a.state.sideEffects.some((e) => e.idempotencyKey === doubt.key);
  return {
    ...running({
      facts,
      decisions: personDecision(a, answerRule("effect-happened"), reason),
      progress: { lastProgressAt: a.at },
      steps: { [step.id]: done },
      guards: { ...a.state.guards, successes: a.state.guards.successes + 1 },
      ...(known ? {} : { sideEffects: [effect] }),
    }),
    effect: { key: doubt.key, output },
  };
}

/** The facts a person's output for the step yields; the step is reported finished once its checkpoint is written. */
function personsOutput(a: Answering, step: Step, run: StepRun, output: unknown) {
  const { values } = producedValues(step, output);
  const facts = makeFacts(values, {
    producedBy: step.id,
    planVersion: a.state.plan?.version ?? 0,
    assumptions: step.assumptions ?? [],
    derivedFrom: step.inputs ?? [],
    observedAt: a.at,
  });
  emitOnceDurable(a.config, {
    type: "step_finished",
    stepId: step.id,
    goal: step.goal,
    status: "succeeded",
    attempt: run.attempts,
  });
  return { values, facts };
}
