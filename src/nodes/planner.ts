/** The planner node: asks the Planner for a draft, validates, enriches, stores plan version 1. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { PlanManagerStateType, PlanManagerUpdate, UsageEntry } from "../runtime/state.js";
import type { Runtime } from "../runtime/options.js";
import { enrichDraft } from "../plan/enrich.js";
import { makeFacts } from "../plan/facts.js";
import { type Plan, type PlanDraft } from "../plan/schema/plan.js";
import { FactKeySchema } from "../plan/schema/primitives.js";
import { type Fact } from "../plan/schema/run.js";
import { formatIssues, validatePlan, type PlanIssue } from "../plan/validate.js";
import { isPlanManagerError, throwIfResumable } from "../errors.js";
import { emit } from "../runtime/events.js";
import { planReview } from "../runtime/interrupts.js";
import { withDeadline } from "../runtime/deadline.js";
import { capText } from "../plan/json-safe.js";
import { startingBudget } from "../policy/ladder/budget.js";
import { modelTrace } from "../contracts/trace.js";
import { checkVersion, holdDecision, qualityWrite, withFindings } from "./shared/quality-hold.js";

/** Why no plan came out: the run fails with this in `outcome`, and no tool runs. */
interface NoPlan {
  message: string;
  failureReason: "invalid_input" | "invalid_plan" | "planner_error";
  issues: PlanIssue[];
}

export function makePlannerNode(rt: Runtime) {
  return async function planner(
    state: PlanManagerStateType,
    config: LangGraphRunnableConfig,
  ): Promise<PlanManagerUpdate> {
    if (state.plan) return {};
    const budget = startingBudget(rt.policy);
    const usage: UsageEntry[] = [];
    const badContext = Object.keys(state.context ?? {}).filter((k) => !FactKeySchema.safeParse(k).success);
    if (badContext.length > 0) {
      const keys = badContext.join(", ");
      const message = `context keys are not valid fact keys: ${keys} (use identifiers, not reserved names)`;
      return failed({ message, failureReason: "invalid_input", issues: [] }, {}, budget, usage);
    }
    const inputFacts = makeFacts(
      { ...state.context },
      { producedBy: "input", planVersion: 0, observedAt: new Date(rt.clock.now()).toISOString() },
    );
    const facts = [...Object.keys(state.facts), ...Object.keys(inputFacts)];
    const answer = await draftPlan(rt, state, facts, usage, config);
    if ("message" in answer) return failed(answer, inputFacts, budget, usage);
    const enriched = enrichDraft(answer, rt.metadataOf);
    const plan: Plan = { version: 1, steps: enriched.steps, assumptions: enriched.assumptions ?? [] };
    if (enriched.rationale !== undefined) plan.rationale = enriched.rationale;
    if (enriched.complete === false) plan.complete = false;
    emit(config, { type: "plan", version: 1, steps: plan.steps.map((s) => ({ id: s.id, goal: s.goal })) });
    // The quality gate, before the first step (docs/decisions/0040-plan-quality-gate.md).
    const findings = await checkVersion(rt, config, { plan, goal: state.goal }, usage, "plan");
    const held = holdDecision(rt, config, findings, plan, state.decisions.length);
    const review = rt.reviewPlan || held !== undefined;

    const update: PlanManagerUpdate = {
      plan,
      budget: { ...budget, spent: planningCost(usage) },
      status: review ? "awaiting_review" : "running",
      ...qualityWrite(state, findings),
    };
    // Empty writes still cost a channel update per superstep: skip them.
    if (Object.keys(inputFacts).length > 0) update.facts = inputFacts;
    if (usage.length > 0) update.usage = usage;
    if (held) update.decisions = held.decision;
    if (review) {
      const reason = held ? `${held.decision.reason}; approve the plan before any step runs` : undefined;
      update.pendingHuman = withFindings(planReview(rt, state.goal, plan), findings, reason);
    }
    return update;
  };
}

/** Asks the planner (which may retry with the validator's issues) and validates its answer once more. */
async function draftPlan(
  rt: Runtime,
  state: PlanManagerStateType,
  availableFacts: string[],
  usage: UsageEntry[],
  config: LangGraphRunnableConfig,
): Promise<PlanDraft | NoPlan> {
  const context = {
    tools: rt.toolNames,
    agents: rt.agentNames,
    policy: rt.policy,
    toolArguments: rt.toolArguments,
    sideEffectTools: rt.sideEffectTools,
    availableFacts,
    canExtend: typeof rt.planner.extend === "function",
  };
  let draft: PlanDraft;
  // A draft the caller gave in the input runs instead of the planner's, checked the same way.
  if (state.draft !== undefined) return checked(state.draft, context);
  try {
    const ask = (signal: AbortSignal) =>
      rt.planner.plan(
        {
          goal: state.goal,
          facts: { ...state.context },
          tools: rt.toolInfo,
          ...rt.agentCatalogue,
          constraints: state.guards.constraints,
          validate: (d) => {
            const result = validatePlan(d, context);
            return result.ok ? [] : result.issues;
          },
          reportUsage: (u) => usage.push({ ...u, purpose: "plan", at: new Date(rt.clock.now()).toISOString() }),
          signal,
        },
        modelTrace(config, "planner", { purpose: "plan" }),
      );
    draft = await withDeadline(rt.policy.plannerTimeoutMs, "planner.plan", ask, config.signal);
  } catch (error) {
    throwIfResumable(error);
    const message = capText(error instanceof Error ? error.message : String(error));
    if (isPlanManagerError(error) && error.code === "invalid_plan")
      return { message, failureReason: "invalid_plan", issues: (error.issues ?? []) as PlanIssue[] };
    return { message: `the planner failed: ${message}`, failureReason: "planner_error", issues: [] };
  }
  return checked(draft, context);
}

function checked(draft: unknown, context: Parameters<typeof validatePlan>[1]): PlanDraft | NoPlan {
  const validation = validatePlan(draft, context);
  if (validation.ok) return validation.draft;
  const message = `the plan was rejected before any step ran:\n${formatIssues(validation.issues)}`;
  return { message, failureReason: "invalid_plan", issues: validation.issues };
}

function failed(
  why: NoPlan,
  facts: Record<string, Fact>,
  budget: PlanManagerStateType["budget"],
  usage: UsageEntry[],
): PlanManagerUpdate {
  const { message, failureReason, issues } = why;
  return {
    status: "failed",
    usage,
    budget: { ...budget, spent: planningCost(usage) },
    facts,
    outcome: { summary: "", failureReason, message, recoverable: false, ...(issues.length > 0 ? { issues } : {}) },
  };
}

/** The first plan's model cost counts against the run's budget (replans go to replanSpent). */
function planningCost(usage: readonly UsageEntry[]): number {
  return usage.reduce((sum, u) => sum + u.cost, 0);
}
