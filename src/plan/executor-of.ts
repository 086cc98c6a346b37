/** Who does a step, as one name: its tool, `agent:NAME` for an agent step, `<human>` for a person. */
import type { Step } from "./schema/step.js";

export function executorOf(step: Pick<Step, "tool" | "agent" | "human">): string {
  if (step.human) return "<human>";
  if (step.agent !== undefined) return `agent:${step.agent}`;
  return step.tool ?? "";
}
