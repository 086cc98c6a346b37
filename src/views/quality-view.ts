/**
 * A finished run's status as the views show it (docs/decisions/0040-plan-quality-gate.md):
 * `completed (degraded: 1 fallback used)` when `outcome.quality` says the result rests on less
 * than the plan promised; the status alone otherwise.
 */
import type { Outcome } from "../plan/schema/outcome.js";
import type { QualitySummary } from "../plan/schema/quality.js";
import { degradedReasons } from "../policy/quality/summary.js";

export function statusLabel(status: string, outcome: { quality?: QualitySummary | undefined } | undefined): string {
  const quality = outcome?.quality;
  if (status !== "completed" || !quality?.degraded) return status;
  return `completed (degraded: ${degradedReasons(quality)})`;
}

/** An outcome as the views read it: a `planMiddleware` thread's has a summary only when it completed degraded. */
export type ViewOutcome = Omit<Outcome, "summary"> & { summary?: string | undefined };
