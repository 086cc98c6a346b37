/**
 * Asking the planner for a replacement: the request carries the goal, the scope, the trigger,
 * the affected steps, trusted and suspect facts, what was tried, and the remaining budget.
 * A planner that throws is a failed replan (it still counts against the replan budget).
 */
import { factValues } from "../plan/facts.js";
import { failedReplan, type GuardHit } from "../policy/replan-guards.js";
import { isPlanManagerError } from "../errors.js";
import { validateReplanDraft, type Replan } from "./replan-context.js";

export async function askPlanner(r: Replan): Promise<{ draft: unknown } | { failed: GuardHit }> {
  const { state, rt } = r;
  const facts = { ...state.facts, ...r.falsification.labels.facts };
  const { maxCost, maxReplanCost } = rt.policy.budget;
  try {
    const draft = await rt.planner.replan!({
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
      ...(r.hints ? { hints: r.hints } : {}),
      validate: (d) => {
        const v = validateReplanDraft(r, d);
        return v.ok ? [] : v.issues;
      },
      reportUsage: (u) => r.usage.push({ ...u, purpose: "replan", at: r.at() }),
    });
    return { draft };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // A draft the planner could not make valid is an invalid draft; anything else, a planner error.
    const kind = isPlanManagerError(error) && error.code === "invalid_plan" ? "invalid_draft" : "planner_error";
    return { failed: { ...failedReplan(kind, message), reason: `the planner failed to replan: ${message}` } };
  }
}
