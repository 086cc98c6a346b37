/**
 * What each answer at an interrupt does to the run: one small function per resume action,
 * each returning where to go next and the update. Decisions they write carry `by: "person"`.
 */
import { makeFacts } from "../../plan/facts.js";
import type { ResumeValue } from "../../plan/schema/interrupts.js";
import type { StepRun } from "../../plan/schema/run.js";
import { approval, personDecision, running, type Answering, type Next } from "./answer-context.js";
import { completeHumanStep, effectHappened } from "./step-answer.js";
import { approveHeld, rejectHeld } from "./held-replan.js";
import type { PlanManagerUpdate } from "../../runtime/state.js";
import { offered } from "../../runtime/interrupts.js";
import { plannerUnavailable } from "../../policy/ladder/guards.js";
import { answerRule } from "../../policy/ladder/person.js";
import { compensationAnswer } from "./compensation-answer.js";
import { submitExternal } from "./external-answer.js";
import { compensationPending, endCompensations } from "../shared/compensate-next.js";

export { HUMAN_DESTINATIONS, type Answering, type Destination, type Next } from "./answer-context.js";

type Handlers = { [A in ResumeValue["action"]]: (a: Answering, reply: Extract<ResumeValue, { action: A }>) => Next };

const HANDLERS: Handlers = {
  // A replan the capability guard held is committed only now, exactly as the person saw it.
  approve: (a) => {
    if (a.pending.kind === "plan_review" && a.state.heldReplan) return approveHeld(a);
    if (a.pending.kind !== "plan_review") return running();
    return running({ decisions: personDecision(a, answerRule("approve-plan"), "a person approved the plan") });
  },
  reject: (a, reply) => rejectHeld(a, reply),
  abort: (a, reply) => {
    const failedStep = a.pending.stepId ? { failedStep: a.pending.stepId } : {};
    const message = reply.reason ?? "aborted at a human review";
    const outcome = { summary: "", ...failedStep, failureReason: "aborted_by_human", message, recoverable: false };
    // The effects the run abandons are undone first, in the executor (docs/decisions/0039-compensation.md).
    const undo = endCompensations(a.rt, a.state, a.config, "aborted", a.at);
    return {
      // Undos already waiting (one failed and asked about, the others behind it) run too.
      goto: compensationPending({ compensations: undo.compensations ?? a.state.compensations })
        ? "executor"
        : "finalize",
      update: {
        status: "aborted",
        outcome,
        decisions: personDecision(a, answerRule("abort"), reply.reason ?? "a person aborted the run"),
        ...undo,
      },
    };
  },
  change_scope: (a, reply) =>
    running({
      scopeChanges: [reply.request],
      decisions: personDecision(a, answerRule("change-scope"), `scope change: ${reply.request}`, {
        failureClass: "scope_changed",
      }),
    }),
  replan: (a, reply) => {
    // Options offered are options that can work; this guards a planner swapped after the interrupt.
    if (!a.rt.canReplan) {
      const unavailable = plannerUnavailable("replan");
      const decisions = personDecision(a, unavailable.rule, unavailable.reason);
      return {
        goto: "human",
        update: {
          status: "awaiting_human",
          decisions,
          pendingHuman: { ...a.pending, options: offered(a.pending.options, false) },
        },
      };
    }
    const guards = { ...a.state.guards, constraints: [...a.state.guards.constraints, reply.constraint] };
    return {
      goto: "replanner",
      update: {
        status: "running",
        guards,
        decisions: personDecision(a, answerRule("replan"), `a person asked for a replan: ${reply.constraint}`),
      },
    };
  },
  retry: (a) => {
    if (!a.pending.stepId || !a.run) return running();
    const run: StepRun = {
      ...a.run,
      status: "pending",
      retryBase: a.run.attempts,
      nextDelayMs: 0,
      ...approval(a.pending, a.state.deviation),
    };
    // A call in doubt called again is a settlement of its own (views/effects.ts counts it).
    const doubt = a.pending.kind === "escalation" ? a.pending.context.inDoubt : undefined;
    const decisions = doubt
      ? personDecision(a, answerRule("effect-retry"), `a person allowed ${doubt.tool} once more under key ${doubt.key}`)
      : personDecision(a, answerRule("retry"), "a person asked to retry the step");
    return running({ steps: { [a.pending.stepId]: run }, decisions });
  },
  skip: (a) => {
    if (a.pending.kind === "escalation" && a.pending.context.horizon !== undefined && a.state.plan)
      return acceptWorkDone(a);
    if (!a.pending.stepId || !a.run) return running();
    const run: StepRun = { ...a.run, status: "skipped", skipReason: "human", endedAt: a.at };
    return running({
      steps: { [a.pending.stepId]: run },
      decisions: personDecision(a, answerRule("skip"), "a person chose to skip the step"),
    });
  },
  provide: (a, reply) => {
    const facts = makeFacts(reply.facts, {
      producedBy: "human",
      planVersion: a.state.plan?.version ?? 0,
      observedAt: a.at,
    });
    const names = Object.keys(reply.facts).join(", ") || "nothing";
    const update: PlanManagerUpdate = {
      facts,
      decisions: personDecision(a, answerRule("provide"), `a person provided ${names}`),
    };
    // Done by a person, not by a tool: any side effect of the step did not happen.
    if (a.pending.stepId && a.run)
      update.steps = {
        [a.pending.stepId]: { ...a.run, status: "succeeded", doneBy: "person", output: reply.facts, endedAt: a.at },
      };
    return running(update);
  },
  complete: (a, reply) => completeHumanStep(a, reply.output),
  happened: (a, reply) => effectHappened(a, reply.output),
  submit: (a, reply) => submitExternal(a, reply),
};

export function applyAnswer(a: Answering, reply: ResumeValue): Next {
  const compensation = compensationAnswer(a, reply);
  if (compensation) return compensation;
  const handler = HANDLERS[reply.action] as (a: Answering, reply: ResumeValue) => Next;
  return handler(a, reply);
}

/** At an extension's escalation: no more steps will be planned; the run ends with the work done. */
function acceptWorkDone(a: Answering): Next {
  const { complete: _more, ...plan } = a.state.plan!;
  const reason = "a person accepted the work done: no more steps will be planned";
  return running({ plan, decisions: personDecision(a, answerRule("skip"), reason) });
}
