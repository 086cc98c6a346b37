/**
 * One round of an undo, as data (docs/decisions/0047-one-undo-runner.md): which compensation runs
 * next, the policy it retries under, whether its next move is a call, a backoff or giving up, and
 * the record it ends with. Pure: the one performer (runtime/undo.ts) carries the moves out, and each
 * face only says how a call, a sleep and a record are made there.
 */
import { backoffDelay, effectiveRetry } from "../../plan/retry.js";
import type { CompensationRecord, ErrorInfo, UndoApproval } from "../../plan/schema/run.js";
import type { RetryPolicy } from "../../plan/schema/step.js";
import { undoApprovalOf, withoutApproval } from "../attempt/approval.js";

/** The first compensation waiting to run, in the order the records were written (latest commit first). */
export function nextPendingUndo(records: readonly CompensationRecord[]): number {
  return records.findIndex((c) => c.status === "pending");
}

/** The retry policy an undo runs under: its step's own fields over the run's default. */
export function undoRetry(record: CompensationRecord, policy: { defaultRetry: RetryPolicy }): RetryPolicy {
  return effectiveRetry(record.retry ? { retry: record.retry } : undefined, policy);
}

/**
 * Journal attempts the undo's calls are numbered above: a person's answer starts a new round above
 * the calls already made (its approval's `attempt`), so the journal tells each round's calls apart.
 */
export function undoBase(record: Pick<CompensationRecord, "approval" | "approvedKey" | "approvedAttempt">): number {
  return undoApprovalOf(record)?.attempt ?? 0;
}

/**
 * A person's retry of a failed undo: the new round numbers its calls above the last call made, and an
 * undo in doubt gets one more call under its key (the one after the call asked about).
 */
export function undoRetried(
  record: Pick<
    CompensationRecord,
    "compensationKey" | "attempts" | "inDoubt" | "approval" | "approvedKey" | "approvedAttempt"
  >,
): UndoApproval {
  const attempt = undoBase(record) + (record.attempts ?? 0);
  return record.inDoubt ? { key: record.compensationKey, attempt } : { attempt };
}

/**
 * The key under which the journal keeps how a round that did not succeed ended (`<compensation
 * key>#<first journal attempt>`): a hook that runs again after asking about it replays that end rather
 * than calling the undo again, one round at a time, whatever later rounds left in the journal.
 */
export function undoRoundKey(record: CompensationRecord): string {
  return `${record.compensationKey}#${undoBase(record) + (record.attempts ?? 0)}`;
}

/** An undo in doubt is recorded under this error name, so its round's end reads back as in doubt. */
export const UNDO_IN_DOUBT = "EffectInDoubt";

/** Where a round stands: calls made in it, the backoffs slept, and the last call's error. */
export interface UndoProgress {
  policy: RetryPolicy;
  calls: number;
  slept: number;
  error?: ErrorInfo | undefined;
}

export type UndoMove = { kind: "call" } | { kind: "sleep"; ms: number } | { kind: "give-up" };

/** The next move of a round: a failed call is backed off before the next, and the policy's attempts end it. */
export function nextUndoMove(p: UndoProgress): UndoMove {
  if (p.calls >= p.policy.maxAttempts) return { kind: "give-up" };
  if (p.calls > 0 && p.slept < p.calls)
    return { kind: "sleep", ms: backoffDelay(p.policy, p.calls, p.error?.retryAfterMs) };
  return { kind: "call" };
}

/**
 * Calls of this round the journal shows made and failed, though the record does not count them (the
 * process ended, or a hook ran again before its writes landed): they are not made again.
 */
export function replayedCalls(
  record: CompensationRecord,
  entry: { attempt: number; result?: { ok: boolean } } | undefined,
): number {
  if (!entry?.result || entry.result.ok) return 0;
  return Math.max(0, entry.attempt - undoBase(record) - (record.attempts ?? 0));
}

/** How a round ended. */
export type UndoEnd =
  | { kind: "done" }
  | { kind: "failed"; error: ErrorInfo }
  | { kind: "in-doubt"; error: ErrorInfo }
  | { kind: "missing-tool" };

/**
 * The record a round ends with: done, or failed with its error — in doubt when its last call was cut
 * and nothing settled it (never called again without a person). A failed record keeps its numbering
 * base, so a person's retry numbers on above it.
 */
export function undoEnded(record: CompensationRecord, end: UndoEnd, attempts: number, at: string): CompensationRecord {
  const { error: _error, inDoubt: _inDoubt, ...rest } = withoutApproval(record);
  if (end.kind === "done") return { ...rest, status: "done", attempts, at };
  // The base carries on; the key was spent by the round's first call.
  const base = undoBase(record);
  const numbered = base ? { approval: { attempt: base } } : {};
  if (end.kind === "in-doubt")
    return { ...rest, ...numbered, status: "failed", attempts, error: end.error, inDoubt: true, at };
  const error: ErrorInfo =
    end.kind === "failed"
      ? end.error
      : { name: "PermanentError", message: `tool "${record.tool}" is not in the registry` };
  return { ...rest, ...numbered, status: "failed", attempts, error, at };
}

/** The answers a failed undo's question takes (those of the graph's resume values). */
export type UndoAction = "happened" | "retry" | "skip" | "abort";

/** The options of a failed undo's question: run it again, leave it undone, or (mid-run) abort. */
const FAILED_OPTIONS: readonly UndoAction[] = ["retry", "skip", "abort"];

/** An undo whose outcome is unknown may also have happened: a person who saw it did says so. */
export function undoOptions(record: CompensationRecord, ending: boolean): UndoAction[] {
  const offered = record.inDoubt ? ["happened" as const, ...FAILED_OPTIONS] : [...FAILED_OPTIONS];
  return ending ? offered.filter((o) => o !== "abort") : offered;
}
