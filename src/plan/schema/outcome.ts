/**
 * How a run ends: its status and the outcome that says what was achieved, what was not, and why.
 */
import { z } from "zod";
import { QualitySummarySchema } from "./quality.js";

export const RunStatusSchema = z.enum([
  "planning",
  "awaiting_review",
  "running",
  "awaiting_human",
  "completed",
  /** Ended with required work undone (a person skipped a non-optional step): see `outcome.missing`. */
  "partial",
  "failed",
  "aborted",
  /** An operator's stop, taken at a step boundary: resumable (`resumeStopped`), unlike `failed` and `aborted`. */
  "stopped",
]);
/**
 * Where a run stands: `planning`, `running`, `awaiting_human`, `completed`, `partial`, `failed`, `aborted`,
 * `stopped`, ….
 */
export type RunStatus = z.infer<typeof RunStatusSchema>;

/** The schema of a run's outcome. */
export const OutcomeSchema = z.object({
  summary: z.string(),
  failedStep: z.string().optional(),
  failureReason: z.string().optional(),
  message: z.string().optional(),
  recoverable: z.boolean().optional(),
  /** Steps skipped or given up on, and what they would have produced. */
  missing: z
    .array(z.object({ stepId: z.string(), goal: z.string(), facts: z.array(z.string()), reason: z.string() }))
    .optional(),
  /** Notes on degraded results (e.g. an optional step that failed, a fallback source). */
  uncertainty: z.array(z.string()).optional(),
  /** Validator issues when the plan was rejected. */
  issues: z.array(z.unknown()).optional(),
  /** How well the run went (docs/decisions/0040-plan-quality-gate.md); set when the run finishes with a plan. */
  quality: QualitySummarySchema.optional(),
});
/** How a run ended: a summary, the step and reason of a failure, what is missing, and the quality summary. */
export type Outcome = z.infer<typeof OutcomeSchema>;
