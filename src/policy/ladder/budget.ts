/**
 * The execution budget held against a whole plan version (pure): before any of its steps starts,
 * the cost of the steps not yet done must fit what is left of `budget.maxCost`. One attempt costs
 * its step's `cost`, or its fallback's own `cost` once the ladder switched to the fallback.
 * See docs/decisions/0016-replans-keep-work.md.
 */
import type { Deviation } from "./deviation.js";
import type { Plan } from "../../plan/schema/plan.js";
import type { Budget, StepRun } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import { DEFAULT_RETRY } from "../../plan/retry.js";
import type { ResolvedPolicy } from "../options.js";

/**
 * A run's budget record before anything is spent: the policy's limits, and its attempts per step
 * for the views — left out at the library's default, as no default is stored.
 */
export function startingBudget(policy: Pick<ResolvedPolicy, "budget" | "defaultRetry">): Budget {
  const { maxCost, maxReplanCost } = policy.budget;
  const { maxAttempts } = policy.defaultRetry;
  return {
    spent: 0,
    replanSpent: 0,
    ...(maxCost !== undefined ? { maxCost } : {}),
    ...(maxReplanCost !== undefined ? { maxReplanCost } : {}),
    ...(maxAttempts !== DEFAULT_RETRY.maxAttempts ? { maxAttempts } : {}),
  };
}

/** What one attempt of `step` is charged. */
export function attemptCost(step: Step, usedFallback: boolean): number {
  return usedFallback && step.fallback !== undefined ? (step.fallback.cost ?? step.cost ?? 0) : (step.cost ?? 0);
}

/**
 * What model calls cost, for `budget.spent`: an agent step's calls are charged when its attempt
 * ends (their cost is known only then). A cost that is not a finite non-negative number (a price
 * table without the model) charges nothing rather than poisoning the sum.
 */
export function usageCost(entries: readonly { cost: number }[]): number {
  return entries.reduce((sum, e) => (Number.isFinite(e.cost) && e.cost > 0 ? sum + e.cost : sum), 0);
}

const done = (run: StepRun | undefined) => run?.status === "succeeded" || run?.status === "skipped";
const started = (run: StepRun | undefined) => run !== undefined && (run.attempts > 0 || run.status !== "pending");

/**
 * The deviation of a plan version whose remaining steps cannot all fit the budget, checked while
 * none of them has started (so once per version); undefined when it fits or there is no budget.
 */
export function projectBudget(
  plan: Plan,
  runs: Readonly<Record<string, StepRun>>,
  spent: number,
  maxCost: number | undefined,
): Deviation | undefined {
  if (maxCost === undefined) return undefined;
  const left = plan.steps.filter((s) => !done(runs[s.id]));
  if (left.some((s) => started(runs[s.id]))) return undefined;
  const costs = left.map((s) => [s.id, attemptCost(s, runs[s.id]?.usedFallback === true)] as const);
  const total = costs.reduce((sum, [, c]) => sum + c, 0);
  if (spent + total <= maxCost) return undefined;
  const listed = costs.filter(([, c]) => c > 0).map(([id, c]) => `${id} ${round(c)}`);
  const message =
    `plan version ${plan.version} costs ${round(total)} for the steps not yet done (${listed.join(", ")}); ` +
    `${round(spent)} of ${maxCost} is spent, so it would exceed budget.maxCost`;
  return { kind: "budget", attempt: 0, message };
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
