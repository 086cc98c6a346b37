import type { Decision } from "../policy/ladder/decision.js";

/** `transient → retry [transient.retry]`; a person's answer says so: `person → abort [human.abort]`. */
export function decisionLine(d: Pick<Decision, "failureClass" | "action" | "rule" | "by">): string {
  const who = d.by === "person" ? "person" : d.by === "llm" ? `${d.failureClass} (llm)` : d.failureClass;
  return `${who} → ${d.action} [${d.rule}]`;
}
