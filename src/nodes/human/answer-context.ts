/**
 * What every answer at an interrupt has in common: the context it is applied to, where it goes
 * next, and the decision it writes (a person's decisions carry `by: "person"`).
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../../runtime/options.js";
import type { PendingHuman, PendingOf, PlanManagerStateType, PlanManagerUpdate } from "../../runtime/state.js";
import { type Action, type FailureClass } from "../../plan/schema/decision.js";
import { type StepRun } from "../../plan/schema/run.js";
import { type Step } from "../../plan/schema/step.js";
import type { Decision } from "../../policy/ladder/decision.js";
import type { RuleId } from "../../policy/ladder/rules.js";
import { emit } from "../../runtime/events.js";
import { decide } from "../../policy/ladder/decide.js";

export const HUMAN_DESTINATIONS = ["executor", "replanner", "finalize", "human"] as const;
export type Destination = (typeof HUMAN_DESTINATIONS)[number];
export interface Next {
  goto: Destination;
  update: PlanManagerUpdate;
  /** A call in doubt a person said happened: its result, for the effect journal. */
  effect?: { key: string; output: unknown };
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

/** Carry on executing. */
export const running = (update: PlanManagerUpdate = {}): Next => ({
  goto: "executor",
  update: { status: "running", ...update },
});

/**
 * A person's decision, its action the rule's (rules.ts; `action` only picks among a rule's several). Its class
 * is that of the escalation it answers, or "none" (plan review, human step).
 */
export function personDecision(
  a: Answering,
  rule: RuleId,
  reason: string,
  { action, failureClass, byPerson = true }: { action?: Action; failureClass?: FailureClass; byPerson?: boolean } = {},
): Decision {
  const decision = decide(rule, {
    after: a.state.decisions.length,
    stepId: a.pending.stepId ? a.pending.stepId : undefined,
    attempt: a.run?.attempts ?? 0,
    failureClass: failureClass ?? (a.pending.kind === "escalation" ? escalatedClass(a.pending) : "none"),
    action,
    reason,
    planVersion: a.state.plan?.version ?? 0,
    at: a.at,
    by: byPerson ? "person" : undefined,
  });
  emit(a.config, { type: "decision", decision });
  return decision;
}

/** The failure class of the escalation a person answers (written by `escalationPayload`). */
function escalatedClass(pending: PendingOf<"escalation">): FailureClass {
  return pending.context.failureClass ?? "unknown";
}

/**
 * A retry of a step whose changed side effect was escalated allows exactly that operation; of a call in
 * doubt, one more call under its key, above the intent the journal numbered (the deviation's
 * `journalAttempt`, from another branch of the thread on a fork).
 */
export function approval(
  pending: PendingHuman,
  deviation: PlanManagerStateType["deviation"],
): Pick<StepRun, "approval"> {
  const context = pending.kind === "escalation" ? pending.context : undefined;
  if (context?.inDoubt) {
    const numbered = deviation?.kind === "effect_in_doubt" ? deviation.journalAttempt : undefined;
    return { approval: { key: context.inDoubt.key, ...(numbered === undefined ? {} : { attempt: numbered }) } };
  }
  return context?.sideEffect ? { approval: { key: context.sideEffect.proposedKey } } : {};
}
