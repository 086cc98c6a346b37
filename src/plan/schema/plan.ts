/**
 * A plan draft (what a planner returns) and a plan version (what the manager stores).
 */
import { z } from "zod";
import { ExpressionSchema, IdSchema, LIMITS, TextSchema } from "./primitives.js";
import { StepSchema } from "./step.js";

export const AssumptionSchema = z.object({
  id: IdSchema,
  statement: TextSchema.min(1),
  /** CEL over `facts`; false → the assumption is falsified. */
  check: ExpressionSchema.optional(),
});
export type Assumption = z.infer<typeof AssumptionSchema>;

export const PlanDraftSchema = z.object({
  steps: z.array(StepSchema).min(1).max(LIMITS.maxSteps),
  assumptions: z.array(AssumptionSchema).max(LIMITS.maxAssumptions).optional(),
  rationale: TextSchema.optional(),
  /**
   * `false`: the draft covers only the next steps of a longer goal (a rolling horizon); when they
   * have all finished, the manager asks `Planner.extend` for more. Default true.
   */
  complete: z.boolean().optional(),
});
export type PlanDraft = z.infer<typeof PlanDraftSchema>;

export const PlanSchema = z.object({
  version: z.number().int().min(1),
  steps: z.array(StepSchema),
  assumptions: z.array(AssumptionSchema),
  rationale: TextSchema.optional(),
  /** Stored only as `false`: more steps will follow (`Planner.extend`) once these have finished. */
  complete: z.boolean().optional(),
});
export type Plan = z.infer<typeof PlanSchema>;
