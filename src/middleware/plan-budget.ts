/**
 * A plan version whose steps not yet done cannot fit `budget.maxCost` is not recorded, as the graph
 * holds such a version before any of its steps starts (`projectBudget`, docs/decisions/0016-replans-keep-work.md):
 * the agent is asked for a cheaper plan, under the graph's rule `budget.replan-cheaper`.
 */
import type { Plan } from "../plan/schema/plan.js";
import type { StepRun } from "../plan/schema/run.js";
import { projectBudget } from "../policy/ladder/budget.js";
import { cheaperPlanVerdict } from "../policy/replan/plan-writes.js";
import { decide } from "./decisions.js";
import type { CallEnv, CallResult } from "./settle.js";

export function overBudget(
  env: CallEnv,
  plan: Plan,
  runs: Readonly<Record<string, StepRun | null>>,
): CallResult | undefined {
  const live: Record<string, StepRun> = {};
  for (const [id, run] of Object.entries(runs)) if (run) live[id] = run;
  const deviation = projectBudget(plan, live, env.state.budget?.spent ?? 0, env.options.policy.budget.maxCost);
  if (!deviation) return undefined;
  const place = { attempt: 0, planVersion: env.state.plan?.version ?? 0, at: env.at() };
  const decision = decide(cheaperPlanVerdict(deviation), place);
  const content = `The plan was not recorded: ${deviation.message}. Write a cheaper plan with write_plan.`;
  return { content, status: "error", update: { decisions: [decision] } };
}
