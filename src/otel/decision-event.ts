/**
 * A decision as a span event: named by what it is about, so that an operator can find the calls
 * in doubt, their settlements, the undos, the quality findings and the people asked without
 * knowing every rule id; every one carries its rule, failure class and action.
 */
import type { Attributes } from "@opentelemetry/api";
import type { Decision } from "../policy/ladder/decision.js";
import { ATTRS, EVENTS } from "./names.js";

const SETTLEMENTS: ReadonlySet<string> = new Set([
  "effect.verified",
  "effect.not-happened",
  "effect.recalled",
  "human.effect-happened",
  "human.effect-retry",
]);

export function decisionEventName(decision: Decision): string {
  const { rule } = decision;
  if (rule === "effect.in-doubt") return EVENTS.inDoubt;
  if (SETTLEMENTS.has(rule)) return EVENTS.settled;
  if (rule.startsWith("compensate.")) return EVENTS.compensation;
  if (rule.startsWith("quality.")) return EVENTS.quality;
  if (decision.by === "person") return EVENTS.humanAnswer;
  if (decision.action === "escalate") return EVENTS.humanWait;
  return EVENTS.decision;
}

export function decisionAttributes(decision: Decision): Attributes {
  return {
    [ATTRS.rule]: decision.rule,
    [ATTRS.failureClass]: decision.failureClass,
    [ATTRS.action]: decision.action,
    [ATTRS.reason]: decision.reason,
    [ATTRS.planVersion]: decision.planVersion,
    [ATTRS.attempt]: decision.attempt,
    ...(decision.stepId !== undefined ? { [ATTRS.stepId]: decision.stepId } : {}),
    ...(decision.brokenAssumption !== undefined ? { [ATTRS.brokenAssumption]: decision.brokenAssumption } : {}),
  };
}

/** What a decision says about a side effect, for the effects counter. */
export function effectOutcome(decision: Decision): "in_doubt" | "compensated" | undefined {
  if (decision.rule === "effect.in-doubt") return "in_doubt";
  if (decision.rule === "compensate.run") return "compensated";
  return undefined;
}
