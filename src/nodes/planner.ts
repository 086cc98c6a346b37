/** The planner node: asks the Planner for a draft, validates, enriches, stores plan version 1. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../runtime/options.js";
import type { PlanManagerStateType, PlanManagerUpdate, UsageEntry } from "../runtime/state.js";
import { enrichDraft } from "../plan/enrich.js";
import { makeFacts } from "../plan/facts.js";
import { FactKeySchema, type Plan, type PlanDraft } from "../plan/schema.js";
import { formatIssues, validatePlan, type PlanIssue } from "../plan/validate.js";
import { isPlanManagerError } from "../errors.js";
import { emit } from "../runtime/events.js";
import { PLAN_REVIEW_OPTIONS, offered } from "../runtime/interrupts.js";

export function makePlannerNode(rt: Runtime) {
  return async function planner(
    state: PlanManagerStateType,
    config: LangGraphRunnableConfig,
  ): Promise<PlanManagerUpdate> {
    if (state.plan) return {};
    const at = () => new Date(rt.clock.now()).toISOString();
    const budget = { spent: 0, replanSpent: 0, ...pickDefined(rt.policy.budget) };

    const badContext = Object.keys(state.context ?? {}).filter((k) => !FactKeySchema.safeParse(k).success);
    if (badContext.length > 0) {
      return failed(
        `context keys are not valid fact keys: ${badContext.join(", ")} (use identifiers, not reserved names)`,
        "invalid_input",
        [],
      );
    }
    const inputFacts = makeFacts({ ...state.context }, { producedBy: "input", planVersion: 0 });
    const usage: UsageEntry[] = [];
    const context = {
      tools: rt.toolNames,
      policy: rt.policy,
      toolArguments: rt.toolArguments,
      availableFacts: [...Object.keys(state.facts), ...Object.keys(inputFacts)],
    };
    const validate = (draft: unknown) => {
      const result = validatePlan(draft, context);
      return result.ok ? [] : result.issues;
    };

    let draft: PlanDraft;
    try {
      draft = await rt.planner.plan({
        goal: state.goal,
        facts: { ...state.context },
        tools: rt.toolInfo,
        constraints: state.guards.constraints,
        validate,
        reportUsage: (u) => usage.push({ ...u, purpose: "plan", at: at() }),
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (isPlanManagerError(error) && error.code === "invalid_plan") {
        return failed(message, "invalid_plan", (error.issues ?? []) as PlanIssue[], usage);
      }
      return failed(`the planner failed: ${message}`, "planner_error", [], usage);
    }
    const validation = validatePlan(draft, context);
    if (!validation.ok) {
      return failed(
        `the plan was rejected before any step ran:\n${formatIssues(validation.issues)}`,
        "invalid_plan",
        validation.issues,
        usage,
      );
    }
    const enriched = enrichDraft(validation.draft, rt.metadataOf);
    const plan: Plan = { version: 1, steps: enriched.steps, assumptions: enriched.assumptions ?? [] };
    if (enriched.rationale !== undefined) plan.rationale = enriched.rationale;
    emit(config, { type: "plan", version: 1, steps: plan.steps.map((s) => ({ id: s.id, goal: s.goal })) });

    const update: PlanManagerUpdate = {
      plan,
      budget: { ...budget, spent: planningCost(usage) },
      status: rt.reviewPlan ? "awaiting_review" : "running",
    };
    // Empty writes still cost a channel update per superstep: skip them.
    if (Object.keys(inputFacts).length > 0) update.facts = inputFacts;
    if (usage.length > 0) update.usage = usage;
    if (rt.reviewPlan) {
      update.pendingHuman = {
        kind: "plan_review",
        reason: "approve the plan before any step runs",
        planVersion: 1,
        options: offered(PLAN_REVIEW_OPTIONS, typeof rt.planner.replan === "function"),
        context: {
          goal: state.goal,
          steps: plan.steps.map((s) => ({
            id: s.id,
            goal: s.goal,
            tool: s.tool ?? null,
            sideEffects: s.sideEffects ?? [],
          })),
          assumptions: plan.assumptions,
        },
      };
    }
    return update;

    function failed(
      message: string,
      failureReason: string,
      issues: PlanIssue[],
      used: UsageEntry[] = [],
    ): PlanManagerUpdate {
      return {
        status: "failed",
        usage: used,
        budget: { ...budget, spent: planningCost(used) },
        facts: badContext.length > 0 ? {} : inputFacts,
        outcome: { summary: "", failureReason, message, recoverable: false, ...(issues.length > 0 ? { issues } : {}) },
      };
    }
  };
}

/** The first plan's model cost counts against the run's budget (replans go to replanSpent). */
function planningCost(usage: readonly UsageEntry[]): number {
  return usage.reduce((sum, u) => sum + u.cost, 0);
}

function pickDefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
