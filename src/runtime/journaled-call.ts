/**
 * A side-effecting call through the effect journal (docs/decisions/0038-effect-journal.md), for
 * both engines: the graph's executor (nodes/executor/graph-port.ts) and `planMiddleware`
 * (middleware/agent-journal.ts; docs/decisions/0043-effects-in-the-middleware.md) hand in how they call a
 * tool; the order is here, once. Before the call: a result the journal holds for the key is the call's
 * (the run's checkpoint lost it); an intent without a result is in doubt and is settled first
 * (policy/ladder/in-doubt.ts). Then the intent is made durable, the tool called, and its output or the
 * error it threw recorded. A call cut by its deadline, or one the tool itself gave up on (its own
 * timeout, a reset connection: `cutByTheTool`), is in doubt too, and settled at once: the ladder never
 * moves on (a retry, the fallback) past an effect that may have happened. Where the step's read-only
 * `verify` probe is to settle it, the call ends `unsettled`: the attempt machine commands the probe
 * (docs/decisions/0068-probe-as-a-command.md) and decides on its answer.
 */
import type { Step } from "../plan/schema/step.js";
import { settleInDoubt, type Settlement } from "../policy/ladder/in-doubt.js";
import { compensationKey } from "../policy/compensation/abandoned.js";
import { liveKey } from "../policy/attempt/redo-key.js";
import { approvedKeyFor, approvedNumbering, type Approved } from "../policy/attempt/approval.js";
import type { EffectResult, RunJournal } from "../contracts/effect-journal.js";
import type { CallOutcome } from "../policy/attempt/attempt.js";
import type { SettledDoubt } from "../policy/attempt/next-attempt.js";

/** How one call under a key ended: the one outcome type of a call (policy/attempt/attempt.ts). */
export type { CallOutcome } from "../policy/attempt/attempt.js";

export interface JournaledCall {
  journal: RunJournal;
  threadId: string;
  key: string;
  /** The step the call is made for; a compensation's undo declares neither keys nor a probe. */
  step: Pick<Step, "id" | "honoursIdempotencyKey" | "verify">;
  /** The call is a compensation's undo: nothing but `effects.honoursKeys` settles it, and its question says so. */
  undo?: boolean;
  tool: string;
  /** The call's arguments, as the intent records them. */
  args: Record<string, unknown>;
  attempt: number;
  /**
   * The intent under `key` was found in doubt and the verify probe says it did not happen: the call
   * goes out again at once (intent, call, result), the lookup done already.
   */
  notHappened?: boolean;
  /** Tools declared to honour idempotency keys (`effects.honoursKeys`). */
  honoursKeys: ReadonlySet<string>;
  /**
   * A person's `retry` of a call in doubt under this key (policy/attempt/approval.ts): one more call may go
   * out, journaled above the intent the person was asked about; an intent above that is the approved call
   * itself, cut too, and is asked about again rather than called a third time.
   */
  approval?: Approved | undefined;
  now: () => string;
  /** Calls the tool once under `key` (the operation's, or a redo key). */
  call: (key: string) => Promise<CallOutcome>;
}

export type { SettledDoubt } from "../policy/attempt/next-attempt.js";

/** What the journal made of the call; `key`: the key it went out (or was settled) under. */
export type Journaled =
  | {
      kind: "answered";
      key: string;
      outcome: CallOutcome;
      effect?: "journaled" | "verified";
      settled: SettledDoubt[];
    }
  | { kind: "in_doubt"; key: string; reason: string; attempt: number; settled: SettledDoubt[] }
  /**
   * In doubt, for the step's verify probe to settle: `cut`, the outcome of this call, cut before it
   * answered (its result not yet written); without it, the journal held the intent numbered `attempt`.
   */
  | { kind: "unsettled"; key: string; attempt: number; cut?: CallOutcome; settled: SettledDoubt[] };

/** The call's own record of what settled its doubts on the way (see `SettledDoubt`). */
type Settling = JournaledCall & { settled: SettledDoubt[] };

export async function journaledCall(call: JournaledCall): Promise<Journaled> {
  let j: Settling = { ...call, settled: [] };
  // A fork's step counts its attempts from its own checkpoint; the journal is the whole thread's.
  j = { ...j, attempt: approvedNumbering(j.approval, j.attempt) };
  if (j.notHappened === true) return callOnce(j, true);
  let entry = await j.journal.lookup(j.threadId, j.key);
  if (entry?.result?.ok) {
    const live = await pastUndone(j);
    if (live !== j.key) {
      // The run's state did not know the effect was undone: the redo goes out under a fresh key.
      j = { ...j, key: live };
      entry = await j.journal.lookup(j.threadId, live);
    }
  }
  if (entry?.result?.ok)
    return { kind: "answered", key: j.key, outcome: entry.result, effect: "journaled", settled: j.settled };
  if (entry && !entry.result) {
    const settled = settle(j, approvedKeyFor(j.approval, entry.attempt, j.attempt));
    if (settled.kind !== "call") return answer(j, settled, entry.attempt);
    noteCall(j, settled.why);
  }
  return callOnce(j, true);
}

/** A settlement that lets the call go out again, noted unless a person's retry (their answer is its decision). */
function noteCall(j: Settling, why: Extract<Settlement, { kind: "call" }>["why"]): void {
  if (why === "honours-keys") j.settled.push({ how: "recalled", key: j.key });
}

/**
 * The key past those whose effect the journal shows undone (`<key>:compensate` succeeded): a result
 * under an undone key is a cancelled booking, never this call's (policy/attempt/redo-key.ts).
 * Read only when the journal holds a result to reuse, so a first call costs no extra read.
 */
async function pastUndone(j: Settling): Promise<string> {
  const undone = new Set<string>();
  for (let key = j.key; ; key = liveKey(j.key, undone)) {
    const undo = await j.journal.lookup(j.threadId, compensationKey(key));
    if (!undo?.result?.ok) return key;
    undone.add(key);
  }
}

/** The intent, the call, the result; a call cut before it answered is settled before it returns. */
async function callOnce(j: Settling, first: boolean): Promise<Journaled> {
  // An intent that cannot be made durable is not called: the error is the attempt's.
  await j.journal.intent(j.threadId, {
    key: j.key,
    stepId: j.step.id,
    tool: j.tool,
    args: j.args,
    attempt: j.attempt,
    at: j.now(),
  });
  const outcome = await j.call(j.key);
  if (outcome.ok) {
    await record(j, { ok: true, output: outcome.output });
    return { kind: "answered", key: j.key, outcome, settled: j.settled };
  }
  if (outcome.cut !== true) {
    await record(j, { ok: false, error: outcome.error });
    return { kind: "answered", key: j.key, outcome, settled: j.settled };
  }
  const settled = settle(j, undefined);
  // Called again under the key once; cut again, it is a person's to settle.
  if (settled.kind === "call" && settled.why === "honours-keys" && first) {
    noteCall(j, settled.why);
    return callOnce(j, false);
  }
  // The probe's "did not happen" writes the cut's error as the result (runtime/run-attempt.ts).
  if (settled.kind === "verify")
    return { kind: "unsettled", key: j.key, attempt: j.attempt, cut: outcome, settled: j.settled };
  if (settled.kind === "call") {
    const reason = `${j.tool} under key ${j.key} was cut by its deadline twice (${outcome.error.message}): did it happen?`;
    return answer(j, { kind: "ask", reason }, j.attempt);
  }
  return answer(j, settled, j.attempt);
}

/** A settlement other than calling: the verify probe to run, or a question for a person about the intent the journal numbered `attempt`. */
function answer(j: Settling, settled: Exclude<Settlement, { kind: "call" }>, attempt: number): Journaled {
  if (settled.kind === "verify") return { kind: "unsettled", key: j.key, attempt, settled: j.settled };
  return { kind: "in_doubt", key: j.key, reason: settled.reason, attempt, settled: j.settled };
}

/** Settles a call in doubt as far as the policy can without the verify probe. */
function settle(j: JournaledCall, approvedKey: string | undefined): Settlement {
  return settleInDoubt({
    step: j.step,
    tool: j.tool,
    key: j.key,
    honoursKeys: j.honoursKeys,
    approvedKey,
    undo: j.undo,
  });
}

/**
 * A result that cannot be written leaves the intent in doubt: the run's checkpoint still records the
 * commit, and a branch that does not see it is asked rather than charged again.
 */
async function record(j: JournaledCall, result: EffectResult): Promise<void> {
  await j.journal.result(j.threadId, j.key, result).catch(() => undefined);
}
