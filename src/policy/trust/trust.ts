/**
 * Evidence against an assumption is recorded whatever the ladder does next (docs/architecture.md "Trust labels"): the
 * assumption is falsified for good and facts are relabelled, whether the answer is a replan
 * or, when a guardrail stops the replan, an escalation.
 */
import type { Plan } from "../../plan/schema/plan.js";
import type { Fact } from "../../plan/schema/run.js";
import type { Decision } from "../ladder/decision.js";
import type { Deviation } from "../ladder/deviation.js";
import { relabel, type Relabelling } from "./relabel.js";

/** Failure classes whose named assumption counts as proven false. */
export const FALSIFYING: ReadonlySet<Decision["failureClass"]> = new Set([
  "assumption_broken",
  "success_signal_unmet",
  "deterministic",
]);

export interface Falsification {
  /** Assumptions this evidence proves false. */
  broken: string[];
  /** Every assumption proven false so far, this evidence included. */
  falsified: string[];
  labels: Relabelling;
}

export function falsify(
  plan: Plan,
  facts: Readonly<Record<string, Fact>>,
  alreadyFalsified: readonly string[],
  deviation: Deviation | null,
  decision: Pick<Decision, "failureClass" | "brokenAssumption">,
): Falsification {
  const assumption = decision.brokenAssumption;
  const named = assumption !== undefined && FALSIFYING.has(decision.failureClass);
  const several = deviation?.kind === "assumption_broken" ? deviation.assumptionIds : undefined;
  const broken = named ? (several ?? [assumption]) : [];
  const falsified = [...alreadyFalsified, ...broken.filter((a) => !alreadyFalsified.includes(a))];
  const blamed = deviation?.stepId ? plan.steps.find((s) => s.id === deviation.stepId) : undefined;
  const provenWrong = blamed?.assumptions?.some((a) => broken.includes(a)) ? blamed.id : undefined;
  return { broken, falsified, labels: relabel(facts, plan, broken, provenWrong) };
}
