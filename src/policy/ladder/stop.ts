/**
 * An operator's stop (docs/architecture.md "What runs where"): taken at the next step boundary, so steps already
 * running finish and keep their results; the run ends with status `stopped`, which is resumable (unlike
 * `failed` and `aborted`). The request lives in state so that routing stays a pure function of it.
 */
import { z } from "zod";
import { RunStatusSchema } from "../../plan/schema/outcome.js";

export const StopRequestSchema = z
  .object({
    /** When the operator asked (ISO time). */
    requestedAt: z.string(),
    /** Who asked or why, as the operator wrote it. */
    reason: z.string().max(2_000).optional(),
    /** The status the run had when it stopped: `resumeStopped` restores it. */
    previousStatus: RunStatusSchema.optional(),
  })
  .nullable();
export type StopRequest = NonNullable<z.infer<typeof StopRequestSchema>>;

/** True when an operator asked the run to stop: start no new step, finish at the next boundary. */
export function stopRequested(state: { stop?: StopRequest | null }): boolean {
  return state.stop !== null && state.stop !== undefined;
}

/** The outcome of a stopped run: resumable, with what was done so far. */
export function stoppedOutcome(stop: StopRequest, done: number, total: number) {
  const why = stop.reason ? `: ${stop.reason}` : "";
  return {
    summary: `Stopped by an operator${why}. ${done} of ${total} steps succeeded; resume to carry on.`,
    failureReason: "stopped",
    message: `stop requested at ${stop.requestedAt}${why}`,
    recoverable: true,
  };
}
