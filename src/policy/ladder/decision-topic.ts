/**
 * What a decision is about, for an operator reading a trace: a call in doubt, its settlement, an
 * undo, a quality finding, a person asked or answering, or a rung of the ladder. The telemetry
 * names a decision's span event by it (docs/decisions/0052-opentelemetry.md).
 */
import type { Decision } from "./decision.js";
import type { RuleId } from "./rules.js";

export type DecisionTopic =
  "in_doubt" | "settlement" | "compensation" | "quality" | "human_answer" | "human_wait" | "ladder";

const SETTLEMENTS: ReadonlySet<RuleId> = new Set<RuleId>([
  "effect.verified",
  "effect.not-happened",
  "effect.recalled",
  "human.effect-happened",
  "human.effect-retry",
]);

export function decisionTopic(decision: Decision): DecisionTopic {
  const { rule } = decision;
  if (rule === "effect.in-doubt") return "in_doubt";
  if (SETTLEMENTS.has(rule)) return "settlement";
  if (rule.startsWith("compensate.")) return "compensation";
  if (rule.startsWith("quality.")) return "quality";
  if (decision.by === "person") return "human_answer";
  if (decision.action === "escalate") return "human_wait";
  return "ladder";
}

/** What a decision says about a side effect: a call in doubt, or an undo that ran. */
export function effectOutcome(decision: Decision): "in_doubt" | "compensated" | undefined {
  if (decision.rule === "effect.in-doubt") return "in_doubt";
  if (decision.rule === "compensate.run") return "compensated";
  return undefined;
}
