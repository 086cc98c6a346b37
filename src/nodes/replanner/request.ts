/**
 * Asking the planner for a replacement: the request carries the goal, the scope, the trigger,
 * the affected steps, trusted and suspect facts, what was tried, and the remaining budget.
 * A planner that throws is a failed replan (it still counts against the replan budget).
 */
import { factValues } from "../../plan/facts.js";
import type { PlanIssue } from "../../plan/validate.js";
import { failedReplan, type GuardHit } from "../../policy/replan-guards.js";
import { isPlanManagerError } from "../../errors.js";
import type { ReplanHint } from "../../contracts/planner.js";
import { validateReplanDraft, type Replan } from "./context.js";
import { withDeadline } from "../../runtime/deadline.js";
import { capText } from "../../plan/json-safe.js";

export type PlannerAnswer = { draft: unknown } | { failed: GuardHit; issues?: PlanIssue[] };

/** `issues`: what was wrong with this replan's previous draft, sent back for the planner to fix. */
export async function askPlanner(r: Replan, hints?: ReplanHint[], issues?: PlanIssue[]): Promise<PlannerAnswer> {
  const { state, rt } = r;
  const facts = { ...state.facts, ...r.falsification.labels.facts };
  const { maxCost, maxReplanCost } = rt.policy.budget;
  const ask = (signal: AbortSignal) =>
    rt.planner.replan!({
      goal: state.goal,
      scope: r.scope,
      trigger: `${r.trigger.reason} [${r.trigger.rule}]`,
      ...(r.assumption !== undefined ? { brokenAssumption: r.assumption } : {}),
      plan: r.plan,
      affectedSteps: r.affected,
      facts: { trusted: factValues(facts), suspect: factValues(facts, "suspect") },
      excluded: r.guards.tried,
      scopeChanges: state.scopeChanges,
      constraints: r.guards.constraints,
      budget: {
        ...(maxCost !== undefined ? { remaining: Math.max(0, maxCost - state.budget.spent) } : {}),
        ...(maxReplanCost !== undefined
          ? { replanRemaining: Math.max(0, maxReplanCost - state.budget.replanSpent) }
          : {}),
      },
      tools: rt.toolInfo,
      ...rt.agentCatalogue,
      ...(hints ? { hints } : {}),
      ...(issues ? { issues } : {}),
      validate: (d) => {
        const v = validateReplanDraft(r, d);
        return v.ok ? [] : v.issues;
      },
      reportUsage: (u) => r.usage.push({ ...u, purpose: "replan", at: r.at() }),
      signal,
    });
  try {
    return { draft: await withDeadline(rt.policy.plannerTimeoutMs, "planner.replan", ask, r.config.signal) };
  } catch (error) {
    const message = capText(error instanceof Error ? error.message : String(error));
    // A draft the planner could not make valid is an invalid draft; anything else, a planner error.
    const invalid = isPlanManagerError(error) && error.code === "invalid_plan";
    const failed = { ...failedReplan(invalid ? "invalid_draft" : "planner_error", message) };
    failed.reason = `the planner failed to replan: ${message}`;
    return invalid ? { failed, issues: typedIssues(error.issues) } : { failed };
  }
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
