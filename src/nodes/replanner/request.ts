/**
 * Asking the planner for a replacement: the request carries the goal, the scope, the trigger,
 * the affected steps, trusted and suspect facts, what was tried, and the remaining budget.
 * A planner that throws is a failed replan (it still counts against the replan budget).
 */
import { factValues } from "../../plan/facts.js";
import type { PlanIssue } from "../../plan/validate.js";
import { failedReplan } from "../../policy/ladder/guards.js";
import type { PlannerAnswer, ReplanAsk } from "../../policy/replan/replan-step.js";
import { affectedSteps, labelledFacts, validateReplanDraft, type ReplanFrame } from "../../policy/replan/draft.js";
import type { MemoryHint } from "../../policy/replan/recall.js";
import { isPlanManagerError, throwIfResumable } from "../../errors.js";
import type { ReplanRequest } from "../../contracts/planner.js";
import { modelTrace } from "../../contracts/trace.js";
import type { ReplanRun } from "./context.js";
import type { Runtime } from "../../runtime/options.js";
import type { Budget } from "../../plan/schema/run.js";
import { withDeadline } from "../../runtime/deadline.js";
import { capText } from "../../plan/json-safe.js";

/**
 * The planner's answer to this replan's ask (the hints and issues it carries): a draft, or why there
 * is none. Its usage is charged to the replan; the planner may check a draft with the replan's validator.
 */
export async function askPlanner(
  rt: Pick<Runtime, "planner" | "policy" | "toolInfo" | "agentCatalogue">,
  run: ReplanRun,
  ask: Extract<ReplanAsk, { next: "ask_planner" }>,
): Promise<PlannerAnswer> {
  const { frame: f, rules, state } = run;
  const validate = (draft: unknown) => {
    const v = validateReplanDraft(rules, f, draft);
    return v.ok ? [] : v.issues;
  };
  const request = (signal: AbortSignal): ReplanRequest => ({
    goal: state.goal,
    ...requestOf(rt, f, state.budget, ask),
    validate,
    reportUsage: (u) => run.usage.push({ ...u, purpose: "replan", at: run.now() }),
    signal,
  });
  try {
    const draft = await withDeadline(
      rt.policy.plannerTimeoutMs,
      "planner.replan",
      (signal) =>
        rt.planner.replan!(
          request(signal),
          modelTrace(run.config, "planner", { purpose: "replan", planVersion: f.plan.version }),
        ),
      run.config.signal,
    );
    return { draft };
  } catch (error) {
    throwIfResumable(error);
    return plannerFailure(error);
  }
}

/** What the request tells the planner: scope, trigger, affected steps, labelled facts, what was tried, budget left. */
function requestOf(
  rt: Pick<Runtime, "policy" | "toolInfo" | "agentCatalogue">,
  f: ReplanFrame,
  spent: Budget,
  ask: { hints?: MemoryHint[] | undefined; issues?: PlanIssue[] | undefined },
) {
  const facts = labelledFacts(f);
  const { maxCost, maxReplanCost } = rt.policy.budget;
  const { hints, issues } = ask;
  return {
    scope: f.scope,
    trigger: `${f.trigger.reason} [${f.trigger.rule}]`,
    ...(f.assumption !== undefined ? { brokenAssumption: f.assumption } : {}),
    plan: f.plan,
    affectedSteps: affectedSteps(f),
    facts: { trusted: factValues(facts), suspect: factValues(facts, "suspect") },
    excluded: f.guards.tried,
    scopeChanges: [...f.scopeChanges],
    constraints: f.guards.constraints,
    budget: {
      ...(maxCost !== undefined ? { remaining: Math.max(0, maxCost - spent.spent) } : {}),
      ...(maxReplanCost !== undefined ? { replanRemaining: Math.max(0, maxReplanCost - spent.replanSpent) } : {}),
    },
    tools: rt.toolInfo,
    ...rt.agentCatalogue,
    ...(hints ? { hints } : {}),
    ...(issues ? { issues } : {}),
  };
}

/** A planner that threw or ran out of time: a failed replan; a draft it could not make valid, an invalid draft. */
function plannerFailure(error: unknown): PlannerAnswer {
  const message = capText(error instanceof Error ? error.message : String(error));
  const invalid = isPlanManagerError(error) && error.code === "invalid_plan";
  const failed = { ...failedReplan(invalid ? "invalid_draft" : "planner_error", message) };
  failed.reason = `the planner failed to replan: ${message}`;
  return invalid ? { failed, issues: typedIssues(error.issues) } : { failed };
}

/** A planner's own issues as the validator's: those without a code (a model answer's shape) are `schema`. */
function typedIssues(issues: readonly unknown[] | undefined): PlanIssue[] {
  return (issues ?? []).map((issue) => {
    const i = (issue ?? {}) as Partial<PlanIssue>;
    const typed: PlanIssue = { code: i.code ?? "schema", path: Array.isArray(i.path) ? i.path : [], message: "" };
    typed.message = typeof i.message === "string" ? i.message : String(issue);
    if (typeof i.stepId === "string") typed.stepId = i.stepId;
    return typed;
  });
}
