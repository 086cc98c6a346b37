/** A deviation: anything the executor saw that is not "the step succeeded". Plain data. */
import type { ErrorInfo } from "../plan/schema.js";

export type DeviationKind =
  | "error"
  | "timeout"
  | "signal_unmet"
  | "precondition"
  | "assumption_broken"
  | "budget"
  | "scope_change"
  /** The tool returned something the run cannot store (not JSON, too large, too deep). */
  | "output_rejected"
  /** A step that committed a side effect would run again with a changed operation. */
  | "side_effect_changed";

export interface Deviation {
  kind: DeviationKind;
  stepId?: string;
  /** Attempts made on the step so far (including the one that deviated). */
  attempt: number;
  message: string;
  error?: ErrorInfo;
  /** The assumption named by the evidence (an `AssumptionBrokenError` or a failed check). */
  assumptionId?: string;
  /** Every assumption found false at once (several → a global replan). */
  assumptionIds?: string[];
  /** Facts a precondition needed that are missing or not trusted. */
  missing?: string[];
  /** The expression that was false. */
  expression?: string;
  /** Facts the false expression read (their producers may be re-run to fix it). */
  facts?: string[];
  /** For `side_effect_changed`: the key already committed, and the key of the changed operation. */
  committedKey?: string;
  proposedKey?: string;
}

/** Reads what a thrown value says about itself, without guessing from class identity. */
export function errorInfo(error: unknown): ErrorInfo {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const e = error as Error & Record<string, unknown>;
  const info: ErrorInfo = { name: e.name, message: e.message };
  const status = typeof e.status === "number" ? e.status : typeof e.statusCode === "number" ? e.statusCode : undefined;
  const response = e.response as { status?: unknown } | undefined;
  const resolvedStatus = status ?? (typeof response?.status === "number" ? response.status : undefined);
  if (resolvedStatus !== undefined) info.status = resolvedStatus;
  const code = typeof e.code === "string" ? e.code : causeCode(e.cause);
  if (code !== undefined) info.code = code;
  if (typeof e.retryAfterMs === "number") info.retryAfterMs = e.retryAfterMs;
  if (typeof e.assumptionId === "string") info.assumptionId = e.assumptionId;
  if (e.evidence !== undefined) info.evidence = e.evidence;
  return info;
}

function causeCode(cause: unknown): string | undefined {
  if (cause && typeof cause === "object" && typeof (cause as { code?: unknown }).code === "string") {
    return (cause as { code: string }).code;
  }
  return undefined;
}
