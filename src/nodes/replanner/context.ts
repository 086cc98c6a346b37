/**
 * One replan's working set, read once from state: the trigger (the last decision), the scope,
 * the falsification and relabelling it implies, and the affected steps. Also the checks every
 * draft for this replan goes through, and what the replan costs.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../../runtime/options.js";
import type { PlanManagerStateType, ReplanGuards, UsageEntry } from "../../runtime/state.js";
import type { Plan, Step } from "../../plan/schema.js";
import type { Decision } from "../../policy/decision.js";
import { validatePlan } from "../../plan/validate.js";
import { describeApproach, globalScope, localScope } from "../../policy/scope.js";
import { falsify, type Falsification } from "../shared/falsify.js";

/** What one replan works with, read once from state. */
export interface Replan {
  rt: Runtime;
  state: PlanManagerStateType;
  config: LangGraphRunnableConfig;
  plan: Plan;
  trigger: Decision;
  scope: "local" | "global";
  assumption: string | undefined;
  guards: ReplanGuards;
  falsification: Falsification;
  affectedIds: string[];
  affected: Step[];
  usage: UsageEntry[];
  at: () => string;
}

export function prepareReplan(
  rt: Runtime,
  state: PlanManagerStateType,
  config: LangGraphRunnableConfig,
): Replan | undefined {
  const current = state.plan;
  const trigger = state.decisions[state.decisions.length - 1];
  if (!current || !trigger) return undefined;
  const scope = trigger.action === "replan_local" && trigger.brokenAssumption ? "local" : "global";
  const guards: ReplanGuards = { ...state.guards, count: state.guards.count + 1 };
  // A falsified assumption is falsified for good: only an assumption the evidence names.
  const falsification = falsify(state, trigger);
  guards.falsified = falsification.falsified;
  const deviation = state.deviation;
  const failedStep = deviation?.stepId && state.steps[deviation.stepId]?.status === "failed" ? [deviation.stepId] : [];
  const affectedIds =
    scope === "local" ? localScope(current, trigger.brokenAssumption!, failedStep) : globalScope(current, state.steps);
  const affected = current.steps.filter((s) => affectedIds.includes(s.id));
  // Approaches already tried are handed to the planner as `excluded`.
  const attempted = affected.filter((s) => (state.steps[s.id]?.attempts ?? 0) > 0).map(describeApproach);
  guards.tried = [...new Set([...guards.tried, ...attempted])];
  const at = () => new Date(rt.clock.now()).toISOString();
  const assumption = trigger.brokenAssumption;
  return {
    rt,
    state,
    config,
    plan: current,
    trigger,
    scope,
    assumption,
    guards,
    falsification,
    affectedIds,
    affected,
    usage: [],
    at,
  };
}

/** Facts with the labels this replan gives them. */
export const labelled = (r: Replan) => ({ ...r.state.facts, ...r.falsification.labels.facts });

/** The validator with this replan's context: kept steps and their facts count as available. */
export function validateReplanDraft(r: Replan, draft: unknown) {
  const kept = r.plan.steps.filter((s) => !r.affectedIds.includes(s.id));
  return validatePlan(draft, {
    tools: r.rt.toolNames,
    agents: r.rt.agentNames,
    policy: r.rt.policy,
    falsified: r.guards.falsified,
    externalSteps: kept.map((s) => s.id),
    externalAssumptions: r.plan.assumptions.map((a) => a.id),
    toolArguments: r.rt.toolArguments,
    sideEffectTools: r.rt.sideEffectTools,
    canExtend: typeof r.rt.planner.extend === "function",
    // Invalidated facts never reach a step; suspect ones may be re-validated by re-running their producer.
    availableFacts: [
      ...Object.entries(labelled(r))
        .filter(([, f]) => f.label !== "invalidated")
        .map(([k]) => k),
      ...kept.flatMap((s) => s.produces ?? []),
    ],
  });
}

/** What the planner's calls cost is charged to the replan budget, separate from execution. */
export function chargeReplan(state: PlanManagerStateType, usage: UsageEntry[]) {
  const cost = usage.reduce((sum, u) => sum + u.cost, 0);
  return { ...state.budget, replanSpent: state.budget.replanSpent + cost };
}
