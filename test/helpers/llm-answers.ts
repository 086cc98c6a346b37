/** Plan answers as a strict-mode model writes them: every field present, null when it does not apply. */
import { LlmStepSchema } from "../../src/planners/llm-schema.js";

/** Every optional field of a strict step, null; read off the schema so the two cannot drift apart. */
export const STEP_NULLS: Record<string, null> = Object.fromEntries(
  Object.keys(LlmStepSchema.shape)
    .filter((key) => key !== "id" && key !== "goal")
    .map((key) => [key, null]),
);

/** A strict step: the nulls, then what the test sets. */
export const strictStep = (step: Record<string, unknown>) => ({ ...STEP_NULLS, ...step });

/** A strict step with a generated goal. */
export const llmStep = (id: string, extra: Record<string, unknown>) => strictStep({ id, goal: `goal ${id}`, ...extra });

export const llmAnswer = (steps: object[], assumptions: object[] = []) => ({ steps, assumptions, rationale: null });
