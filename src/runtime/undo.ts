/**
 * The one undo runner (docs/decisions/0047-one-undo-runner.md), for the graph
 * (nodes/shared/compensate-next.ts) and for `createAgent` (middleware/compensate.ts): the first pending
 * compensation runs under `<effect key>:compensate` through the effect journal
 * (runtime/journaled-call.ts; docs/decisions/0038-effect-journal.md), retried per its step's retry
 * policy with the moves policy/compensation/undo-round.ts decides. A face hands in a port: how it
 * calls a tool, the clock it sleeps on, its run's stop. Calls the journal shows made in this
 * round are not made again, so a face may run it again after its process or hook ended early.
 */
import type { CompensationRecord } from "../plan/schema/run.js";
import type { RetryPolicy } from "../plan/schema/step.js";
import { settledVerdict } from "../policy/ladder/in-doubt.js";
import { compensationDecision } from "../policy/compensation/verdict.js";
import {
  nextPendingUndo,
  nextUndoMove,
  replayedCalls,
  undoBase,
  undoEnded,
  undoRetry,
  undoRoundKey,
  UNDO_IN_DOUBT,
  type UndoEnd,
  type UndoProgress,
} from "../policy/compensation/undo-round.js";
import { decide } from "../policy/ladder/decide.js";
import { undoApprovalOf } from "../policy/attempt/approval.js";
import type { Decision } from "../policy/ladder/decision.js";
import type { JournalEntry, RunJournal } from "../contracts/effect-journal.js";
import type { CallOutcome, Journaled, SettledDoubt } from "./journaled-call.js";
import { runAttempt, type AttemptPort } from "./run-attempt.js";
import type { Clock } from "./clock.js";

/** One call of an undo's tool, under `key`; `attempt` counts the undo's calls in its record. */
export interface UndoCall {
  tool: string;
  args: Record<string, unknown>;
  key: string;
  stepId: string;
  attempt: number;
  timeoutMs: number;
}

/** What a face gives the runner. */
export interface UndoPort {
  /** The run's effect journal; none without a checkpointer (the undo is then called as it is). */
  journal: RunJournal | undefined;
  threadId: string;
  /** Tools declared to honour idempotency keys (`effects.honoursKeys`): the only say an undo's tool has. */
  honoursKeys: ReadonlySet<string>;
  policy: { defaultRetry: RetryPolicy; defaultTimeoutMs: number };
  /** Whether the face can call the tool (it is in its registry). */
  has: (tool: string) => boolean;
  /** Calls the tool once; a call cut before it answered says so (`cut`). */
  call: (c: UndoCall) => Promise<CallOutcome>;
  /** The clock a failed undo's backoff is slept on. */
  clock: Pick<Clock, "sleep">;
  /** The run's stop: it ends a backoff, and a failed undo is then left pending for the resumed run. */
  stop?: AbortSignal | undefined;
  /** Now, as an ISO timestamp. */
  now: () => string;
}

/** An undo that ran: its record, and the calls in doubt the journal settled on the way (each a decision). */
export interface UndoRan {
  record: CompensationRecord;
  settled: SettledDoubt[];
}

/**
 * Runs one undo until it is done or its retry policy runs out. A call whose outcome is unknown is
 * not made again: the record is `failed` and `inDoubt` until a person answers, and a person's `retry`
 * (its `approval`) lets exactly one more call go out under the key. `stopped`: the run's caller
 * stopped it while a failed undo waited to be called again; nothing is written.
 */
export async function runUndo(port: UndoPort, record: CompensationRecord): Promise<UndoRan | "stopped"> {
  const settled: SettledDoubt[] = [];
  const replay = await replayedEnd(port, record);
  if (replay) return { record: replay, settled };
  const entry = await port.journal?.lookup(port.threadId, record.compensationKey);
  if (record.tool === undefined || !port.has(record.tool)) return { record: withoutTool(port, record, entry), settled };
  const replayed = replayedCalls(record, entry);
  const progress: UndoProgress = {
    policy: undoRetry(record, port.policy),
    calls: replayed,
    slept: Math.max(0, replayed - 1),
  };
  if (replayed > 0 && entry?.result?.ok === false) progress.error = entry.result.error;
  let attempts = (record.attempts ?? 0) + replayed;
  for (;;) {
    const move = nextUndoMove(progress);
    if (move.kind === "give-up") {
      const error = progress.error ?? { name: "CompensationFailed", message: "not called" };
      return { record: await roundEnded(port, record, { kind: "failed", error }, attempts), settled };
    }
    if (move.kind === "sleep") {
      // A stop ends the backoff: nothing more is called in this run.
      if (!(await slept(port, move.ms)) || port.stop?.aborted === true) return "stopped";
      progress.slept++;
      continue;
    }
    attempts++;
    progress.calls++;
    const made = await undoCall(port, record, attempts);
    settled.push(...made.settled);
    if (made.kind === "in_doubt") {
      const error = { name: UNDO_IN_DOUBT, message: made.reason };
      return { record: await roundEnded(port, record, { kind: "in-doubt", error }, attempts), settled };
    }
    // A keyed call is not cut by a stop: its result is kept (docs/decisions/0028-a-stopped-run-keeps-its-results.md).
    if (made.outcome.ok) return { record: undoEnded(record, { kind: "done" }, attempts, port.now()), settled };
    progress.error = made.outcome.error;
    if (port.stop?.aborted === true) return "stopped";
  }
}

/** The backoff on the face's clock: false when a sleep given the stop rejected (it was stopped). */
async function slept(port: UndoPort, ms: number): Promise<boolean> {
  if (port.stop === undefined) return port.clock.sleep(ms).then(() => true);
  return port.clock.sleep(ms, port.stop).then(
    () => true,
    () => false,
  );
}

/**
 * An undo whose tool the face cannot call (not in its registry; a restarted process that was never
 * handed it): what the journal holds settles it — its result, or an intent without one, in doubt.
 */
function withoutTool(port: UndoPort, record: CompensationRecord, entry: JournalEntry | undefined): CompensationRecord {
  const attempts = record.attempts ?? 0;
  if (entry?.result?.ok) return undoEnded(record, { kind: "done" }, attempts, port.now());
  if (!entry || entry.result) return undoEnded(record, { kind: "missing-tool" }, attempts, port.now());
  const message = `the call of ${record.tool} under key ${record.compensationKey} was cut before it answered, and the tool is not in the registry to settle it`;
  return undoEnded(record, { kind: "in-doubt", error: { name: UNDO_IN_DOUBT, message } }, attempts, port.now());
}

/** How this round ended, when the journal kept it (a hook ran again after asking about it). */
async function replayedEnd(port: UndoPort, record: CompensationRecord): Promise<CompensationRecord | undefined> {
  const kept = await port.journal?.lookup(port.threadId, undoRoundKey(record));
  if (!kept?.result || kept.result.ok) return undefined;
  const { error } = kept.result;
  const end = error.name === UNDO_IN_DOUBT ? { kind: "in-doubt" as const, error } : { kind: "failed" as const, error };
  return undoEnded(record, end, kept.attempt, port.now());
}

/** A round that did not succeed: its end kept in the journal under the round's key, then its record. */
async function roundEnded(
  port: UndoPort,
  record: CompensationRecord,
  end: Extract<UndoEnd, { kind: "failed" | "in-doubt" }>,
  attempts: number,
): Promise<CompensationRecord> {
  const ended = undoEnded(record, end, attempts, port.now());
  const key = undoRoundKey(record);
  const intent = { key, stepId: record.stepId, tool: record.tool!, args: {}, attempt: attempts, at: ended.at };
  // Unwritten, the round is replayed from the undo's own entries instead: the same end, or a question.
  await port.journal
    ?.intent(port.threadId, intent)
    .then(() => port.journal!.result(port.threadId, key, { ok: false, error: end.error }))
    .catch(() => undefined);
  return ended;
}

/**
 * The undo's call: the driver's one keyed call (runtime/run-attempt.ts, `undo: true`), the journal inside
 * it under the compensation key. The journal numbers the undo's calls on from its base (the approval's
 * `attempt`), though a round counts its `attempts` from 1: a call a person approved, cut too, is then
 * told from the one asked about. The tool sees the round's count, as the record shows it.
 */
async function undoCall(
  port: UndoPort,
  record: CompensationRecord,
  attempts: number,
): Promise<Exclude<Journaled, { kind: "unsettled" }>> {
  const tool = record.tool!;
  const args = { ...record.args };
  const key = record.compensationKey;
  const timeoutMs = port.policy.defaultTimeoutMs;
  const calls: AttemptPort = {
    call: (_c, k) => port.call({ tool, args, key: k ?? key, stepId: record.stepId, attempt: attempts, timeoutMs }),
    // An undo has no probe: only effects.honoursKeys settles it in doubt.
    probe: async () => undefined,
    clock: port.clock,
    now: port.now,
    journal: port.journal,
    honoursKeys: port.honoursKeys,
  };
  const made = await runAttempt(calls, {
    undo: true,
    threadId: port.threadId,
    key,
    tool,
    args,
    attempt: undoBase(record) + attempts,
    timeoutMs,
    stepId: record.stepId,
    // The round numbers its calls above the approval's base already: only the key is the approval's here.
    approval: { key: undoApprovalOf(record)?.key },
  });
  const settled = [...(made.settled ?? [])];
  if (made.effect === "in_doubt" && !made.outcome.ok)
    return {
      kind: "in_doubt",
      key: made.key ?? key,
      reason: made.outcome.error.message,
      attempt: made.inDoubtAttempt ?? 0,
      settled,
    };
  const effect = made.effect === "journaled" || made.effect === "verified" ? { effect: made.effect } : {};
  return { kind: "answered", key: made.key ?? key, outcome: made.outcome, ...effect, settled };
}

/** The next pending undo of `records`, run; its decisions numbered after `after` (-1: numbered where they land). */
export interface UndoNext extends UndoRan {
  index: number;
  decisions: Decision[];
}

export async function undoNext(
  port: UndoPort,
  records: readonly CompensationRecord[],
  place: { planVersion: number; after: number },
): Promise<UndoNext | "stopped" | undefined> {
  const index = nextPendingUndo(records);
  if (index < 0) return undefined;
  const ran = await runUndo(port, records[index]!);
  if (ran === "stopped") return "stopped";
  const { record } = ran;
  const at = record.at;
  const after = (i: number) => (place.after < 0 ? -1 : place.after + i);
  // An undo in doubt the journal settled (called again under a key its tool honours) is a decision too.
  const decisions = ran.settled.map((s, i) => {
    const verdict = settledVerdict(s.how, record.tool ?? "compensation", s.key);
    return decide(verdict.rule, {
      after: after(i),
      planVersion: place.planVersion,
      at,
      stepId: record.stepId,
      attempt: record.attempts ?? 0,
      failureClass: verdict.failureClass,
      reason: verdict.reason,
    });
  });
  decisions.push(compensationDecision(record, { after: after(decisions.length), planVersion: place.planVersion, at }));
  return { ...ran, index, decisions };
}
