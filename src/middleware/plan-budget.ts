/**
 * A plan version whose steps not yet done cannot fit `budget.maxCost` is not recorded, as the graph
 * holds such a version before any of its steps starts (`projectBudget`, docs/decisions/0016-replans-keep-work.md):
 * the agent is asked for a cheaper plan, under the graph's rule `budget.replan-cheaper`. Until a plan
 * is recorded, a call of a tool the refused plan's costed steps name is not run: a model that ignores
 * the request cannot start the step anyway, as the graph never starts one of such a version.
 */
import type { Plan } from "../plan/schema/plan.js";
import type { StepRun } from "../plan/schema/run.js";
import { attemptCost, projectBudget } from "../policy/ladder/budget.js";
import { cheaperPlanVerdict } from "../policy/replan/plan-writes.js";
import { decisionAt } from "./decisions.js";
import type { CallEnv, ToolReply } from "./settle.js";
import type { AgentPlanValues } from "./agent-state.js";

export function overBudget(
  env: CallEnv,
  plan: Plan,
  runs: Readonly<Record<string, StepRun | null>>,
): ToolReply | undefined {
  const live: Record<string, StepRun> = {};
  for (const [id, run] of Object.entries(runs)) if (run) live[id] = run;
  const deviation = projectBudget(plan, live, env.state.budget?.spent ?? 0, env.options.policy.budget.maxCost);
  if (!deviation) return undefined;
  const place = { attempt: 0, planVersion: env.state.plan?.version ?? 0, at: env.at() };
  const decision = decisionAt(cheaperPlanVerdict(deviation), place);
  const content = `The plan was not recorded: ${deviation.message}. Write a cheaper plan with write_plan.`;
  const steps = plan.steps.flatMap((step) => [
    ...(step.tool !== undefined && attemptCost(step, false) > 0 ? [{ stepId: step.id, tool: step.tool }] : []),
    ...(step.fallback && attemptCost(step, true) > 0 ? [{ stepId: step.id, tool: step.fallback.tool }] : []),
  ]);
  const held = { reason: deviation.message, steps };
  return { content, status: "error", update: { decisions: [decision], planRun: { overBudget: held } } };
}

/**
 * A call no recorded step governs, of a tool a plan sent back over budget would have charged for:
 * refused, not run, with the rule that sent the plan back.
 */
export function overBudgetCall(state: Pick<AgentPlanValues, "planRun">, tool: string): ToolReply | undefined {
  const held = state.planRun.overBudget;
  const step = held?.steps.find((s) => s.tool === tool);
  if (!held || !step) return undefined;
  const content =
    `Not run: ${tool} is step "${step.stepId}" of a plan that was not recorded (budget.replan-cheaper): ` +
    `${held.reason}. Write a cheaper plan with write_plan.`;
  return { content, status: "error", update: {} };
}
