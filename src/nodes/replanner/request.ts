/**
 * Asking the planner for a replacement: the request carries the goal, the scope, the trigger,
 * the affected steps, trusted and suspect facts, what was tried, and the remaining budget.
 * A planner that throws is a failed replan (it still counts against the replan budget).
 */
import { factValues } from "../../plan/facts.js";
import type { PlanIssue } from "../../plan/validate.js";
import { failedReplan } from "../../policy/ladder/guards.js";
import type { PlannerAnswer } from "../../policy/replan/replan-step.js";
import { affectedSteps, labelledFacts, type ReplanFrame } from "../../policy/replan/draft.js";
import type { MemoryHint } from "../../policy/replan/recall.js";
import { isPlanManagerError, resumableCause } from "../../errors.js";
import type { ReplanRequest } from "../../contracts/planner.js";
import type { ModelTrace } from "../../contracts/trace.js";
import type { Runtime } from "../../runtime/options.js";
import type { Budget } from "../../plan/schema/run.js";
import { withDeadline } from "../../runtime/deadline.js";
import { capText } from "../../plan/json-safe.js";

/** One request for this replan: what the decision asks for (`hints`, the last draft's `issues`) and the hooks. */
export interface PlannerAsk {
  goal: string;
  budget: Budget;
  frame: ReplanFrame;
  hints?: MemoryHint[] | undefined;
  /** What was wrong with this replan's previous draft, sent back for the planner to fix. */
  issues?: PlanIssue[] | undefined;
  validate: ReplanRequest["validate"];
  reportUsage: ReplanRequest["reportUsage"];
  trace?: ModelTrace;
}

export async function askPlanner(
  rt: Pick<Runtime, "planner" | "policy" | "toolInfo" | "agentCatalogue">,
  ask: PlannerAsk,
  runSignal: AbortSignal | undefined,
): Promise<PlannerAnswer> {
  const { frame: f, hints, issues } = ask;
  const facts = labelledFacts(f);
  const { maxCost, maxReplanCost } = rt.policy.budget;
  const request = (signal: AbortSignal) =>
    rt.planner.replan!(
      {
        goal: ask.goal,
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
          ...(maxCost !== undefined ? { remaining: Math.max(0, maxCost - ask.budget.spent) } : {}),
          ...(maxReplanCost !== undefined
            ? { replanRemaining: Math.max(0, maxReplanCost - ask.budget.replanSpent) }
            : {}),
        },
        tools: rt.toolInfo,
        ...rt.agentCatalogue,
        ...(hints ? { hints } : {}),
        ...(issues ? { issues } : {}),
        validate: ask.validate,
        reportUsage: ask.reportUsage,
        signal,
      },
      ask.trace,
    );
  try {
    return { draft: await withDeadline(rt.policy.plannerTimeoutMs, "planner.replan", request, runSignal) };
  } catch (error) {
    // A model that cannot be asked now ends the run unfailed: it carries on when run again.
    const waiting = resumableCause(error);
    if (waiting) throw waiting;
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
