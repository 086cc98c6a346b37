/**
 * The shapes of the plan quality gate's results (docs/decisions/0040-plan-quality-gate.md): a finding,
 * state `quality`, and `outcome.quality`. The rules and severities are chosen in policy/quality/.
 */
import { z } from "zod";

export const SeveritySchema = z.enum(["low", "medium", "high"]);
export type Severity = z.infer<typeof SeveritySchema>;

export const QualityFindingSchema = z.object({
  /** The gate's rule: `quality.structure`, `quality.estimate-bounds`, `quality.estimate-evidence`, `quality.reviewer`, `quality.reviewer-failed`. */
  rule: z.string(),
  severity: SeveritySchema,
  stepId: z.string().optional(),
  assumptionId: z.string().optional(),
  message: z.string(),
  /** The plan version the finding is about (findings of every version stay in state). */
  planVersion: z.number().int().min(1).optional(),
});
export type QualityFinding = z.infer<typeof QualityFindingSchema>;

/** State `quality`: every finding of every plan version, in the order found. */
export const QualityStateSchema = z.object({ findings: z.array(QualityFindingSchema) });
export type QualityState = z.infer<typeof QualityStateSchema>;

/** `outcome.quality`: how well a finished run went, beside its status. */
export const QualitySummarySchema = z.object({
  /** A fallback used, a suspect fact used or a stale input refreshed: a required result rests on less than planned. */
  degraded: z.boolean(),
  /** Steps that succeeded through their fallback. */
  fallbacksUsed: z.number().int().min(0),
  /** Optional steps that failed and were skipped. */
  optionalSkipped: z.number().int().min(0),
  /** Facts suspect at the end that a step which succeeded read as an input. */
  suspectFactsUsed: z.number().int().min(0),
  /** How many findings the plan quality gate made, over every version (they are in state `quality.findings`). */
  findings: z.number().int().min(0),
  /** Producers run again because an input was older than its step allows (decisions under `evidence.stale`). */
  staleRefreshes: z.number().int().min(0),
});
export type QualitySummary = z.infer<typeof QualitySummarySchema>;
