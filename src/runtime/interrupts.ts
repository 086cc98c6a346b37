/**
 * What a person sees at an interrupt: the options each kind offers, and the escalation payload (docs/architecture.md
 * "State and channels").
 */
import type { PendingHuman, PlanManagerStateType } from "./state.js";
import type { ExternalOffer, ResumeAction } from "../plan/schema/interrupts.js";
import type { Plan } from "../plan/schema/plan.js";
import type { Step } from "../plan/schema/step.js";
import type { Runtime } from "./options.js";
import type { Decision } from "../policy/ladder/decision.js";

export const ESCALATION_OPTIONS: ResumeAction[] = ["retry", "skip", "provide", "replan", "change_scope", "abort"];
/** A call in doubt: it happened (with its output), call it again under its key, or stop. */
export const IN_DOUBT_OPTIONS: ResumeAction[] = ["happened", "retry", "abort"];
export const PLAN_REVIEW_OPTIONS = ["approve", "replan", "change_scope", "abort"] as const;
export const HUMAN_STEP_OPTIONS = ["complete", "skip", "change_scope", "abort"] as const;
/** An external step: the calling agent submits its output or error; skip, a scope change and abort as for a human step. */
export const EXTERNAL_STEP_OPTIONS = ["submit", "skip", "change_scope", "abort"] as const;

/** Answers that need the planner's `replan` (a scope change is planned for by a global replan). */
const NEEDS_REPLAN: ReadonlySet<ResumeAction> = new Set(["replan", "change_scope"]);

/** Options offered are options that can work: without `planner.replan`, no replan answers. */
export function offered(options: readonly ResumeAction[], canReplan: boolean): ResumeAction[] {
  return canReplan ? [...options] : options.filter((o) => !NEEDS_REPLAN.has(o));
}

export function escalationPayload(
  state: PlanManagerStateType,
  decision: Decision,
  options: ResumeAction[] = ESCALATION_OPTIONS,
): PendingHuman {
  const step = decision.stepId ? state.plan?.steps.find((s) => s.id === decision.stepId) : undefined;
  const run = decision.stepId ? state.steps[decision.stepId] : undefined;
  const tried = state.decisions
    .filter((d) => d.stepId === decision.stepId && d.planVersion === decision.planVersion)
    .concat(decision)
    .map((d) => `attempt ${d.attempt}: ${d.failureClass} → ${d.action} (${d.rule})`);
  const payload: PendingHuman = {
    kind: "escalation",
    reason: decision.reason,
    planVersion: decision.planVersion,
    options,
    context: {
      goal: state.goal,
      failureClass: decision.failureClass,
      rule: decision.rule,
      ...(step
        ? { step: { id: step.id, goal: step.goal, ...executorField(step), produces: step.produces ?? [] } }
        : {}),
      ...(run ? { attempts: run.attempts, error: run.error, output: run.output } : {}),
      tried,
      ...(state.deviation?.kind === "side_effect_changed"
        ? { sideEffect: { committedKey: state.deviation.committedKey, proposedKey: state.deviation.proposedKey } }
        : {}),
      ...(state.deviation?.kind === "effect_in_doubt"
        ? { inDoubt: { key: state.deviation.key, tool: state.deviation.tool } }
        : {}),
    },
  };
  if (decision.stepId !== undefined) payload.stepId = decision.stepId;
  return payload;
}

/** The interrupt of a human step: its prompt, the facts it reads, and (with `timeoutMs`) its deadline. */
export function humanStepPayload(
  goal: string,
  planVersion: number,
  step: Step,
  facts: Record<string, unknown>,
  canReplan: boolean,
  deadline: number | undefined,
): PendingHuman {
  return {
    kind: "human_step",
    reason: step.human!.prompt,
    stepId: step.id,
    planVersion,
    options: offered(HUMAN_STEP_OPTIONS, canReplan),
    context: { goal, step: { id: step.id, goal: step.goal }, facts },
    ...(deadline !== undefined ? { deadline } : {}),
  };
}

/**
 * The interrupt of the external steps offered to the calling agent (docs/decisions/0042-external-steps.md):
 * what the agent needs to do each — `offers` are built by the executor from each step, its trusted inputs
 * and its key, in plan order. The question is the first's (`stepId`, `reason`, its fields in `context`,
 * as when one step was offered at a time) and `context.offered` lists them all, the first included.
 */
export function externalStepPayload(
  planVersion: number,
  goal: string,
  offers: readonly [ExternalOffer, ...ExternalOffer[]],
  canReplan: boolean,
): PendingHuman {
  const first = offers[0];
  return {
    kind: "external_step",
    reason: first.step.instructions,
    stepId: first.step.id,
    planVersion,
    options: offered(EXTERNAL_STEP_OPTIONS, canReplan),
    context: { goal, ...first, offered: [...offers] },
  };
}

/** `reviewPlan`: a person approves the first plan before any step runs. */
export function planReview(rt: Pick<Runtime, "canReplan">, goal: string, plan: Plan): PendingHuman {
  const steps = plan.steps.map((s) => ({
    id: s.id,
    goal: s.goal,
    tool: s.tool ?? null,
    ...(s.agent !== undefined ? { agent: s.agent } : {}),
    sideEffects: s.sideEffects ?? [],
  }));
  return {
    kind: "plan_review",
    reason: "approve the plan before any step runs",
    planVersion: 1,
    options: offered(PLAN_REVIEW_OPTIONS, rt.canReplan),
    context: { goal, steps, assumptions: plan.assumptions },
  };
}

/** A step's tool, or its agent for a step done by one (the person sees who did the step). */
function executorField(step: Step): { tool?: string | undefined; agent?: string } {
  return step.agent !== undefined ? { agent: step.agent } : { tool: step.tool };
}
