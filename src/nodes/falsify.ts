/**
 * Evidence against an assumption is recorded whatever the ladder does next: the assumption is
 * falsified for good and facts are relabelled (DESIGN §3), whether the answer is a replan or,
 * when a guardrail stops the replan, an escalation.
 */
import type { PlanManagerStateType } from "../graph/state.js";
import type { Decision } from "../plan/schema.js";
import { relabel, type Relabelling } from "../policy/scope.js";

/** Failure classes whose named assumption counts as proven false. */
const FALSIFYING: ReadonlySet<Decision["failureClass"]> = new Set(["assumption_broken", "success_signal_unmet", "deterministic"]);

export interface Falsification {
  broken: string[];
  falsified: string[];
  labels: Relabelling;
}

export function falsify(state: PlanManagerStateType, decision: Pick<Decision, "failureClass" | "brokenAssumption">): Falsification {
  const plan = state.plan!;
  const assumption = decision.brokenAssumption;
  const named = assumption !== undefined && FALSIFYING.has(decision.failureClass);
  const broken = named ? (state.deviation?.assumptionIds ?? [assumption]) : [];
  const falsified = [...state.guards.falsified, ...broken.filter((a) => !state.guards.falsified.includes(a))];
  const stepId = state.deviation?.stepId;
  const blamed = stepId ? plan.steps.find((s) => s.id === stepId) : undefined;
  const provenWrong = blamed?.assumptions?.some((a) => broken.includes(a)) ? blamed.id : undefined;
  return { broken, falsified, labels: relabel(state.facts, plan, broken, provenWrong) };
}
