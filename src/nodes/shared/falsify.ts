/** Adapter from graph state to the pure `falsify` (policy/trust/trust.ts). */
import type { Decision } from "../../policy/ladder/decision.js";
import { falsify as falsifyEvidence, type Falsification } from "../../policy/trust/trust.js";
import type { PlanManagerStateType } from "../../runtime/state.js";

export type { Falsification } from "../../policy/trust/trust.js";

export function falsify(
  state: PlanManagerStateType,
  decision: Pick<Decision, "failureClass" | "brokenAssumption">,
): Falsification {
  return falsifyEvidence(state.plan!, state.facts, state.guards.falsified, state.deviation, decision);
}
