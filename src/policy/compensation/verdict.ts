/**
 * The decisions compensation records (docs/decisions/0039-compensation.md): one ran,
 * one failed for good, or a replan would abandon effects that nothing can undo. Pure.
 */
import type { CompensationRecord } from "../../plan/schema/run.js";
import { decide } from "../ladder/decide.js";
import type { Decision } from "../ladder/decision.js";
import type { Abandoned } from "./abandoned.js";

/** Where the decision goes: after how many decisions, in which version, when. */
export interface DecisionPlace {
  after: number;
  planVersion: number;
  at: string;
}

/**
 * A compensation that ended: `compensate.run` when it is done, `compensate.failed` when its retries
 * ran out or its outcome is unknown (its call was cut and its tool does not honour keys: never
 * called again without a person's say-so, docs/decisions/0038-effect-journal.md).
 */
export function compensationDecision(record: CompensationRecord, place: DecisionPlace): Decision {
  const what = `${record.tool ?? "compensation"} for the effect of step "${record.stepId}" (${record.idempotencyKey})`;
  const attempts = record.attempts ?? 0;
  if (record.status === "done")
    return decide("compensate.run", {
      ...place,
      stepId: record.stepId,
      attempt: attempts,
      failureClass: "none",
      reason: `${what} ran under key ${record.compensationKey}`,
    });
  if (record.inDoubt)
    return decide("compensate.failed", {
      ...place,
      stepId: record.stepId,
      attempt: attempts,
      failureClass: "unknown",
      reason:
        `the outcome of ${what} under key ${record.compensationKey} is unknown: ${record.error?.message ?? "its call was cut"} ` +
        "retry calls it once more under the same key; skip leaves it as it is",
    });
  const error = record.error ? `: ${record.error.name}: ${record.error.message}` : "";
  return decide("compensate.failed", {
    ...place,
    stepId: record.stepId,
    attempt: attempts,
    failureClass: "unknown",
    reason: `${what} failed ${attempts} time(s) under key ${record.compensationKey}${error}; the effect still stands`,
  });
}

/** A replan would abandon committed effects whose steps have no `compensate`: asked before the version commits. */
export function missingDecision(
  missing: readonly Abandoned[],
  place: DecisionPlace & { trigger?: { stepId?: string | undefined; attempt: number } },
): Decision {
  const list = missing.map((m) => `step "${m.step.id}" (${m.effect.idempotencyKey})`).join(", ");
  return decide("compensate.missing", {
    after: place.after,
    planVersion: place.planVersion,
    at: place.at,
    stepId: missing[0]?.step.id,
    attempt: place.trigger?.attempt ?? 0,
    failureClass: "none",
    reason:
      `the replan would abandon committed side effects with no compensate: ${list}; ` +
      "approve to keep them and go on, or abort",
  });
}
