/**
 * One replan's frame, read once from state: the trigger (the last decision), the scope, the
 * falsification and relabelling it implies, and the affected steps. Also what the run lets a draft
 * use, and what the replan costs. The decision itself is pure, in policy/replan/replan-step.ts.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../../runtime/options.js";
import type { PlanManagerStateType, ReplanGuards, UsageEntry } from "../../runtime/state.js";
import type { DraftRules, ReplanFrame } from "../../policy/replan/draft.js";
import { describeApproach, globalScope, localScope } from "../../policy/replan/scope.js";
import { falsify } from "../shared/falsify.js";
import { executorEffects } from "../shared/executor-effects.js";

/** One replan of one run: what the port's calls carry. */
export interface ReplanRun {
  state: PlanManagerStateType;
  config: LangGraphRunnableConfig;
  frame: ReplanFrame;
  rules: DraftRules;
  usage: UsageEntry[];
  /** The clock, read as the calls answer. */
  now: () => string;
}

/** The frame of the replan the last decision asks for; none without a plan or a trigger. */
export function frameOf(state: PlanManagerStateType, at: string): ReplanFrame | undefined {
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
  return {
    plan: current,
    steps: state.steps,
    facts: state.facts,
    decisions: state.decisions,
    scopeChanges: state.scopeChanges,
    trigger,
    scope,
    assumption: trigger.brokenAssumption,
    guards,
    falsification,
    affectedIds,
    at,
    goal: state.goal,
  };
}

/** What the run's options let a replan draft use. */
export function draftRules(rt: Runtime): DraftRules {
  return {
    tools: rt.toolNames,
    agents: rt.agentNames,
    policy: rt.policy,
    toolArguments: rt.toolArguments,
    sideEffectTools: rt.sideEffectTools,
    canExtend: typeof rt.planner.extend === "function",
    sideEffectsOf: (executor) => executorEffects(rt, executor),
    metadataOf: (tool) => rt.metadataOf(tool),
  };
}

/** What the planner's calls cost is charged to the replan budget, separate from execution. */
export function chargeReplan(state: PlanManagerStateType, usage: readonly UsageEntry[]) {
  const cost = usage.reduce((sum, u) => sum + u.cost, 0);
  return { ...state.budget, replanSpent: state.budget.replanSpent + cost };
}
