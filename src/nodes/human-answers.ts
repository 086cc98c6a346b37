/**
 * What each answer at an interrupt does to the run: one small function per resume action,
 * each returning where to go next and the update. Decisions they write carry `by: "person"`.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../runtime/options.js";
import type { PendingHuman, PlanManagerStateType, PlanManagerUpdate } from "../runtime/state.js";
import { makeFacts, producedValues } from "../plan/facts.js";
import {
  FailureClassSchema,
  type Decision,
  type FailureClass,
  type ResumeValue,
  type Step,
  type StepRun,
} from "../plan/schema.js";
import { deadlinePassed } from "../policy/replan-guards.js";
import type { RuleId } from "../policy/rules.js";
import { ESCALATION_OPTIONS, offered } from "../runtime/interrupts.js";
import { emit } from "../runtime/events.js";

export const HUMAN_DESTINATIONS = ["executor", "replanner", "finalize", "human"] as const;
export type Destination = (typeof HUMAN_DESTINATIONS)[number];
export interface Next {
  goto: Destination;
  update: PlanManagerUpdate;
}

/** What an answer is applied to. */
export interface Answering {
  rt: Runtime;
  state: PlanManagerStateType;
  config: LangGraphRunnableConfig;
  pending: PendingHuman;
  step: Step | undefined;
  run: StepRun | undefined;
  at: string;
}

type Handlers = { [A in ResumeValue["action"]]: (a: Answering, reply: Extract<ResumeValue, { action: A }>) => Next };

const running = (update: PlanManagerUpdate = {}): Next => ({
  goto: "executor",
  update: { status: "running", ...update },
});

const HANDLERS: Handlers = {
  approve: () => running(),
  abort: (a, reply) => {
    const failedStep = a.pending.stepId ? { failedStep: a.pending.stepId } : {};
    const message = reply.reason ?? "aborted at a human review";
    const outcome = { summary: "", ...failedStep, failureReason: "aborted_by_human", message, recoverable: false };
    return {
      goto: "finalize",
      update: {
        status: "aborted",
        outcome,
        decisions: decide(a, "abort", "human.abort", reply.reason ?? "a person aborted the run"),
      },
    };
  },
  change_scope: (a, reply) =>
    running({
      scopeChanges: [reply.request],
      decisions: decide(a, "replan_global", "human.change-scope", `scope change: ${reply.request}`, "scope_changed"),
    }),
  replan: (a, reply) => {
    // Options offered are options that can work; this guards a planner swapped after the interrupt.
    if (typeof a.rt.planner.replan !== "function") {
      const decisions = decide(
        a,
        "escalate",
        "replan.unavailable",
        "the planner cannot replan (it has no replan function)",
      );
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
        decisions: decide(a, "replan_global", "human.replan", `a person asked for a replan: ${reply.constraint}`),
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
      ...approval(a.pending),
    };
    return running({
      steps: { [a.pending.stepId]: run },
      decisions: decide(a, "retry", "human.retry", "a person asked to retry the step"),
    });
  },
  skip: (a) => {
    if (!a.pending.stepId || !a.run) return running();
    const run: StepRun = { ...a.run, status: "skipped", skipReason: "human", endedAt: a.at };
    return running({
      steps: { [a.pending.stepId]: run },
      decisions: decide(a, "skip", "human.skip", "a person chose to skip the step"),
    });
  },
  provide: (a, reply) => {
    const facts = makeFacts(reply.facts, { producedBy: "human", planVersion: a.state.plan?.version ?? 0 });
    const names = Object.keys(reply.facts).join(", ") || "nothing";
    const update: PlanManagerUpdate = {
      facts,
      decisions: decide(a, "provide", "human.provide", `a person provided ${names}`),
    };
    // Done by a person, not by a tool: any side effect of the step did not happen.
    if (a.pending.stepId && a.run)
      update.steps = {
        [a.pending.stepId]: { ...a.run, status: "succeeded", doneBy: "person", output: reply.facts, endedAt: a.at },
      };
    return running(update);
  },
  complete: (a, reply) => {
    const { step, run } = a;
    if (!step || !run) return running();
    const late =
      a.pending.kind === "human_step"
        ? deadlinePassed(a.pending.deadline, a.rt.clock.now(), step.id, step.human?.timeoutMs)
        : undefined;
    if (late) return lateAnswer(a, step, late.rule, late.reason, reply.output);
    const { values } = producedValues(step, reply.output);
    const facts = makeFacts(values, {
      producedBy: step.id,
      planVersion: a.state.plan?.version ?? 0,
      assumptions: step.assumptions ?? [],
      derivedFrom: step.inputs ?? [],
    });
    emit(a.config, {
      type: "step_finished",
      stepId: step.id,
      goal: step.goal,
      status: "succeeded",
      attempt: run.attempts,
    });
    const done: StepRun = {
      ...run,
      status: "succeeded",
      attempts: run.attempts + 1,
      output: reply.output,
      endedAt: a.at,
    };
    return running({
      facts,
      steps: { [step.id]: done },
      guards: { ...a.state.guards, successes: a.state.guards.successes + 1 },
    });
  },
};

export function applyAnswer(a: Answering, reply: ResumeValue): Next {
  const handler = HANDLERS[reply.action] as (a: Answering, reply: ResumeValue) => Next;
  return handler(a, reply);
}

/** The deadline rule decides here, not the person who answered late: escalate with the late answer attached. */
function lateAnswer(a: Answering, step: Step, rule: RuleId, reason: string, output: unknown): Next {
  const decision = decide(a, "escalate", rule, reason, "budget_exhausted", false);
  const pendingHuman: PendingHuman = {
    kind: "escalation",
    reason,
    stepId: step.id,
    planVersion: a.state.plan?.version ?? 0,
    options: offered(["complete", ...ESCALATION_OPTIONS], typeof a.rt.planner.replan === "function"),
    context: { goal: a.state.goal, step: { id: step.id, goal: step.goal }, lateOutput: output, rule },
  };
  return { goto: "human", update: { decisions: decision, pendingHuman, status: "awaiting_human" } };
}

/** A person's decision; its class is that of the escalation it answers, or "none" (plan review, human step). */
function decide(
  a: Answering,
  action: Decision["action"],
  rule: RuleId,
  reason: string,
  failureClass?: FailureClass,
  byPerson = true,
): Decision {
  const decision: Decision = {
    seq: a.state.decisions.length + 1,
    ...(a.pending.stepId ? { stepId: a.pending.stepId } : {}),
    attempt: a.run?.attempts ?? 0,
    failureClass: failureClass ?? (a.pending.kind === "escalation" ? escalatedClass(a.pending) : "none"),
    action,
    rule,
    reason,
    planVersion: a.state.plan?.version ?? 0,
    at: a.at,
    ...(byPerson ? { by: "person" as const } : {}),
  };
  emit(a.config, { type: "decision", decision });
  return decision;
}

/** The failure class of the escalation a person answers (written by `escalationPayload`). */
function escalatedClass(pending: PendingHuman): FailureClass {
  const parsed = FailureClassSchema.safeParse(pending.context.failureClass);
  return parsed.success ? parsed.data : "unknown";
}

/** A retry of a step whose changed side effect was escalated allows exactly that operation. */
function approval(pending: PendingHuman): Pick<StepRun, "approvedKey"> {
  const effect = pending.context.sideEffect as { proposedKey?: unknown } | undefined;
  return typeof effect?.proposedKey === "string" ? { approvedKey: effect.proposedKey } : {};
}
