/**
 * The first plan's draft: the planner asked (it may retry with the validator's issues) under the
 * planner's deadline, or the draft the caller gave, validated once more either way. What comes out is
 * a draft, or why there is none (the planner node fails the run with it).
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { modelTrace } from "../../contracts/trace.js";
import { isPlanManagerError, throwIfResumable } from "../../errors.js";
import { capText } from "../../plan/json-safe.js";
import type { PlanDraft } from "../../plan/schema/plan.js";
import { formatIssues, validatePlan, type PlanIssue } from "../../plan/validate.js";
import { withDeadline } from "../../runtime/deadline.js";
import type { Runtime } from "../../runtime/options.js";
import type { PlanManagerStateType, UsageEntry } from "../../runtime/state.js";

/** Why no plan came out: the run fails with this in `outcome`, and no tool runs. */
export interface NoPlan {
  message: string;
  failureReason: "invalid_input" | "invalid_plan" | "planner_error";
  issues: PlanIssue[];
}

/** Asks the planner (which may retry with the validator's issues) and validates its answer once more. */
export async function draftPlan(
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
