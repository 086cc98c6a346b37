/**
 * Errors. Two families:
 * - `PlanManagerError`: misuse of the library (bad options, invalid plan, bad resume value).
 *   Recognised with `isPlanManagerError`, which works across package copies.
 * - Tool errors (`TransientError`, `PermanentError`, `AssumptionBrokenError`): thrown by tools
 *   to state retryability explicitly instead of leaving the classifier to guess.
 */

export type PlanManagerErrorCode =
  | "invalid_options"
  | "invalid_plan"
  | "invalid_resume"
  | "planner_failed"
  | "unknown_tool"
  | "expression_error"
  | "limit_exceeded"
  /** A second run was started on a thread that is already running in this process. */
  | "thread_busy"
  /**
   * `updateState` from outside wrote a key the manager owns or does not know, or (from a node) a
   * value that does not fit the channel's schema.
   */
  | "invalid_update"
  /** `invoke` was given a goal or context that cannot start a run (checked before any checkpoint). */
  | "invalid_input"
  /** `invoke` on a thread whose run has ended (`completed`, `partial`, `failed`, `aborted`). */
  | "thread_finished"
  /** `invoke` on a thread an operator stopped: it carries on only through `resumeStopped` or the CLI. */
  | "thread_stopped"
  /** A tool returned a value that cannot be stored as JSON. */
  | "invalid_output"
  /**
   * A retention call (archive, unarchive, delete) named a thread the checkpointer has no checkpoint of, or
   * `invoke(null)` asked to resume one: there is nothing to resume.
   */
  | "thread_not_found"
  /** The checkpointer cannot do what was asked (archiving needs LangGraph's SQLite or PostgreSQL saver). */
  | "unsupported_saver"
  /** An idempotency key already names a plan made for another request (the MCP service's `plan_create`). */
  | "idempotency_conflict"
  /**
   * A `SamplingChatModel` call whose run has no MCP client that can sample (none declared the
   * capability, or it went away): the run pauses where it stands, resumable from a client that can.
   */
  | "sampling_unsupported";

export interface PlanManagerErrorDetails {
  /** Dotted path of the offending field, e.g. `policy.maxReplans` or `steps[2].tool`. */
  path?: string;
  /** Structured issues, e.g. the plan validator's list. */
  issues?: readonly unknown[];
  cause?: unknown;
}

const BRAND = Symbol.for("langgraph-replan.PlanManagerError");

/**
 * The library's own error: `code` says what went wrong (`invalid_options`, `invalid_resume`, `thread_busy`,
 * …), `path` where. Test for it with `isPlanManagerError`, which also recognises one from another copy of the
 * package.
 */
export class PlanManagerError extends Error {
  readonly code: PlanManagerErrorCode;
  readonly path?: string;
  readonly issues?: readonly unknown[];
  readonly [BRAND] = true;

  constructor(code: PlanManagerErrorCode, message: string, details: PlanManagerErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "PlanManagerError";
    this.code = code;
    if (details.path !== undefined) this.path = details.path;
    if (details.issues !== undefined) this.issues = details.issues;
  }

  /**
   * The error as an HTTP response: `{ error: code, message }` with a 4xx for what the caller sent.
   * LangGraph's API server (`langgraph dev`, built on Hono) answers a thrown error that has this
   * method with its response; without it a refused `updateState` reached the SDK as a bare 500,
   * which the SDK also retries (docs/decisions/0034-http-errors.md).
   */
  getResponse(): Response {
    return new Response(JSON.stringify({ error: this.code, message: this.message }), {
      status: HTTP_STATUS[this.code] ?? 500,
      headers: { "content-type": "application/json" },
    });
  }
}

/** The caller's mistakes by code; anything else stays a 500 (with its message). */
const HTTP_STATUS: Partial<Record<PlanManagerErrorCode, number>> = {
  invalid_update: 422,
  invalid_input: 422,
  invalid_resume: 422,
  thread_busy: 409,
  thread_finished: 409,
  thread_stopped: 409,
  thread_not_found: 404,
  idempotency_conflict: 409,
};

/** Whether `value` is a `PlanManagerError`, from this copy of the package or another. */
export function isPlanManagerError(value: unknown): value is PlanManagerError {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** Errors that end a run where it stands instead of failing it: run again later, the thread carries on. */
const LEAVES_RUN_RESUMABLE: ReadonlySet<PlanManagerErrorCode> = new Set(["sampling_unsupported"]);

/**
 * The error (or the one behind it, as a planner's `planner_failed` wraps its model's) that leaves
 * the run resumable: a node rethrows it instead of failing the plan
 * (docs/decisions/0060-sampling-through-the-client.md). Undefined for any other error.
 */
export function resumableCause(error: unknown): PlanManagerError | undefined {
  for (let at = error, depth = 0; at !== undefined && depth < 5; at = (at as { cause?: unknown }).cause, depth++)
    if (isPlanManagerError(at) && LEAVES_RUN_RESUMABLE.has(at.code)) return at;
  return undefined;
}

/** A model that cannot be asked now (`resumableCause`) ends the run unfailed, to carry on when run again: rethrown. */
export function throwIfResumable(error: unknown): void {
  const waiting = resumableCause(error);
  if (waiting) throw waiting;
}

/** The longest wait a server's Retry-After can ask for (one day); a longer one is waited this long. */
export const MAX_RETRY_AFTER_MS = 86_400_000;

/**
 * A server's Retry-After as a wait the run can honour, or undefined when it names none: NaN (a
 * Retry-After given as an HTTP date and parsed as a number), ±Infinity, a negative number and
 * non-numbers are ignored — the retry policy's backoff applies — and a wait past a day is a day.
 */
export function usableRetryAfter(value: unknown): number | undefined {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return undefined;
  return Math.min(value, MAX_RETRY_AFTER_MS);
}

/** A failure worth retrying: the same call may succeed later (rate limit, 5xx, network blip). */
export class TransientError extends Error {
  /** Set only when `options.retryAfterMs` is a finite number ≥ 0 (at most a day): see `usableRetryAfter`. */
  readonly retryAfterMs?: number;
  readonly retryable = true;
  constructor(message: string, options: { retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "TransientError";
    const retryAfterMs = usableRetryAfter(options.retryAfterMs);
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
  }
}

/** A failure that will repeat with the same input: do not retry, change the approach. */
export class PermanentError extends Error {
  readonly retryable = false;
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "PermanentError";
  }
}

/** The tool found evidence that an assumption of the plan is false. */
export class AssumptionBrokenError extends Error {
  readonly assumptionId: string;
  readonly evidence?: unknown;
  readonly retryable = false;
  constructor(assumptionId: string, message: string, options: { evidence?: unknown; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AssumptionBrokenError";
    this.assumptionId = assumptionId;
    if (options.evidence !== undefined) this.evidence = options.evidence;
  }
}
