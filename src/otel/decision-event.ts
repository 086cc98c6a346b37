/**
 * A decision as a span event: named by what it is about, so that an operator can find the calls
 * in doubt, their settlements, the undos, the quality findings and the people asked without
 * knowing every rule id; every one carries its rule, failure class and action.
 */
import type { Attributes } from "@opentelemetry/api";
import type { Decision } from "../policy/ladder/decision.js";
import { decisionTopic, effectOutcome, type DecisionTopic } from "../policy/ladder/decision-topic.js";
import { ATTRS, EVENTS } from "./names.js";

const EVENT_OF: Record<DecisionTopic, string> = {
  in_doubt: EVENTS.inDoubt,
  settlement: EVENTS.settled,
  compensation: EVENTS.compensation,
  quality: EVENTS.quality,
  human_answer: EVENTS.humanAnswer,
  human_wait: EVENTS.humanWait,
  ladder: EVENTS.decision,
};

export function decisionEventName(decision: Decision): string {
  return EVENT_OF[decisionTopic(decision)];
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

export { effectOutcome };
