/**
 * Who does a step, as one name: its tool, `agent:NAME` for an agent step, `<human>` for a person,
 * `<external>` for the calling agent.
 */
import type { Step } from "./schema/step.js";

export function executorOf(step: Pick<Step, "tool" | "agent" | "human" | "external">): string {
  if (step.human) return "<human>";
  if (step.external) return "<external>";
  if (step.agent !== undefined) return `agent:${step.agent}`;
  return step.tool ?? "";
}
