/**
 * A person's approval of one more call under a key, as one record (docs/decisions/0057-one-approval-record.md):
 * read from a step's run or an undo's record — checkpoints written before the record hold it as two loose
 * fields, read the same — cleared when a call spends it, and what it allows in the effect journal. Pure.
 */
import type { Approval, UndoApproval } from "../../plan/schema/run.js";

/** Any approval, a step's or an undo's: the key it allows a call under, the journal attempt it numbers above. */
export interface Approved {
  key?: string | undefined;
  attempt?: number | undefined;
}

/** A record that may carry an approval, in its one field or in the fields of an older checkpoint. */
interface Carrier {
  approval?: Approved | undefined;
  approvedKey?: string | undefined;
  approvedAttempt?: number | undefined;
}

/** The approval a step's run carries, whichever way its checkpoint wrote it. */
export function approvalOf(run: Carrier | undefined): Approval | undefined {
  const approval = readApproval(run);
  return approval?.key === undefined ? undefined : (approval as Approval);
}

/** The approval an undo's record carries (a retry that was not in doubt numbers its round but names no key). */
export function undoApprovalOf(record: Carrier | undefined): UndoApproval | undefined {
  const approval = readApproval(record);
  if (approval === undefined) return undefined;
  return { ...(approval.key === undefined ? {} : { key: approval.key }), attempt: approval.attempt ?? 0 };
}

function readApproval(record: Carrier | undefined): Approved | undefined {
  if (record === undefined) return undefined;
  if (record.approval) return record.approval;
  const { approvedKey: key, approvedAttempt: attempt } = record;
  if (key === undefined && attempt === undefined) return undefined;
  return { ...(key === undefined ? {} : { key }), ...(attempt === undefined ? {} : { attempt }) };
}

/** The record without its approval, in either shape: a call spent it, or an answer replaces it. */
export function withoutApproval<T extends Carrier>(record: T): Omit<T, keyof Carrier> {
  const { approval: _approval, approvedKey: _key, approvedAttempt: _attempt, ...rest } = record;
  return rest;
}

/**
 * The journal attempt a call goes out as: above the intent a person was asked about, which another branch
 * of the thread may have numbered above this step's own count (a fork's count restarts from its checkpoint).
 */
export function approvedNumbering(approval: Approved | undefined, attempt: number): number {
  return approval?.attempt !== undefined && approval.attempt >= attempt ? approval.attempt + 1 : attempt;
}

/**
 * The key an approval lets one more call go out under, for the intent in doubt the journal numbered
 * `intentAttempt`: only an intent up to the one the person was asked about (without a number, one of an
 * earlier attempt than the call's). An intent above it is the approved call itself, cut too (the process
 * died in it): it is asked about again rather than called a third time.
 */
export function approvedKeyFor(approval: Approved | undefined, intentAttempt: number, attempt: number) {
  if (approval?.key === undefined) return undefined;
  const covered = approval.attempt ?? attempt - 1;
  return intentAttempt <= covered ? approval.key : undefined;
}
