/**
 * The one performer of a step's call (docs/decisions/0044-one-attempt-driver.md): it asks the pure
 * machine (`nextAttempt`, policy/attempt/next-attempt.ts) what to do, does it, and feeds back what it
 * did, until the machine ends the drive (`done`, or `ask` about a call in doubt). What it does is the
 * same on both faces — the effect journal's order (runtime/journaled-call.ts: lookup, intent, call,
 * result, settling a call in doubt), the verify probe of a call in doubt and the result its answer
 * writes (docs/decisions/0068-probe-as-a-command.md), ONE deadline per call (a timer and an AbortSignal
 * the tool sees), one abort path (the caller's stop), the retry sleeps on the clock the port hands
 * over. A port says what differs per face: how a tool and a probe are called, the clock, where news
 * goes. The graph's executor and the createAgent middleware are ports of it.
 */
import type { ErrorInfo } from "../plan/schema/run.js";
import type { Step } from "../plan/schema/step.js";
import type { CallOutcome } from "../policy/attempt/attempt.js";
import { cutByTheTool, probeThrew, readProbe, type ProbeRead } from "../policy/ladder/in-doubt.js";
import { approvalOf, type Approved } from "../policy/attempt/approval.js";
import type { Decision } from "../policy/ladder/decision.js";
import { errorInfo } from "../policy/ladder/deviation.js";
import {
  nextAttempt,
  type AttemptCommand,
  type AttemptSnapshot,
  type CallCommand,
  type DoneCommand,
  type InDoubtAsk,
  type Performed,
  type ProbeCommand,
} from "../policy/attempt/next-attempt.js";
import type { RunJournal } from "../contracts/effect-journal.js";
import type { Clock } from "./clock.js";
import { journaledCall } from "./journaled-call.js";

/** The error a call ends with past its deadline; the ladder reads it as transient. */
export class StepTimeout extends Error {
  constructor(ms: number) {
    super(`step timed out after ${ms} ms`);
    this.name = "StepTimeout";
  }
}

/** How an attempt ends when the run is stopped before its tool is called (during its backoff). */
class NotCalled extends Error {
  constructor() {
    super("the run was stopped before the tool was called");
  }
}

export interface AttemptPort {
  /**
   * Calls the tool once under `key`; `signal` aborts at the deadline (and, for a call that may be
   * made again, at the caller's stop). A throw is read as the call's error.
   */
  call(command: CallCommand, key: string | undefined, signal: AbortSignal): Promise<CallOutcome>;
  /** Runs a read-only verify probe with the call's key in its config; throws when it cannot. */
  probe(tool: string, args: Record<string, unknown>, key: string, signal: AbortSignal): Promise<unknown>;
  /** The clock the retry backoffs are slept on (the run's; the middleware's `sleep` option). */
  clock: Pick<Clock, "sleep">;
  /**
   * Ends a backoff early without stopping the drive: LangGraph's own signal, for a graph run that
   * has no caller's stop. The stop, when given, ends it instead.
   */
  wake?: AbortSignal | undefined;
  /** The run's clock, as an ISO timestamp. */
  now(): string;
  /** The effect journal of the run (none without a checkpointer). */
  journal?: RunJournal | undefined;
  /** Tools declared to honour idempotency keys (`effects.honoursKeys`). */
  honoursKeys: ReadonlySet<string>;
  /** The caller's stop: it ends a backoff, and aborts calls that may be made again. */
  stop?: AbortSignal | undefined;
  /** A call is about to go out, after any backoff. */
  starting?(command: CallCommand): void;
  /** A decision that is news now (a retry, a fallback), sent before the drive goes on. */
  announce?(decision: Decision): void;
}

export interface Driven {
  done: DoneCommand;
  /** The drive ended on a call in doubt: the question for a person, which the face raises. */
  asked?: InDoubtAsk;
  gathered: Performed[];
  /** A tool was called (false when the run was stopped during the backoff). */
  called: boolean;
}

/**
 * One keyed call with no ladder around it: a compensation's undo (`undo: true`: only
 * `effects.honoursKeys` settles it in doubt, and its question says so). Its retries are its runner's.
 */
export interface KeyedCall {
  undo: true;
  threadId: string;
  key: string;
  tool: string;
  args: Record<string, unknown>;
  /** The journal attempt the call is numbered with. */
  attempt: number;
  timeoutMs: number;
  /** The step the undone effect belongs to. */
  stepId: string;
  /** A person's approval of a call in doubt under the key. */
  approval: Approved | undefined;
}

export type KeyedOutcome = Extract<Performed, { kind: "called" }>;

/**
 * `first`: the machine's first command for `snapshot`, when the caller asked it already (the graph
 * does, to record the attempt's start): `nextAttempt` is pure, so it is not asked twice.
 */
export function runAttempt(port: AttemptPort, snapshot: AttemptSnapshot, first?: AttemptCommand): Promise<Driven>;
export function runAttempt(port: AttemptPort, call: KeyedCall): Promise<KeyedOutcome>;
export function runAttempt(
  port: AttemptPort,
  s: AttemptSnapshot | KeyedCall,
  first?: AttemptCommand,
): Promise<Driven | KeyedOutcome> {
  if ("undo" in s) return keyedCall(port, s);
  return drive(port, s, first);
}

function keyedCall(port: AttemptPort, k: KeyedCall): Promise<KeyedOutcome> {
  const c: CallCommand = {
    kind: "call",
    tool: k.tool,
    args: k.args,
    key: k.key,
    operation: k.key,
    timeoutMs: k.timeoutMs,
    attempt: k.attempt,
    charge: 0,
    announce: [],
  };
  if (!port.journal) {
    const made = withDeadline(port, c, k.key, (signal) => port.call(c, k.key, signal));
    return made.then((outcome) => ({ kind: "called", at: port.now(), outcome, key: k.key }));
  }
  const on = { threadId: k.threadId, step: { id: k.stepId }, approval: k.approval, undo: true };
  return journaled(port, k.key, on, c);
}

async function drive(port: AttemptPort, snapshot: AttemptSnapshot, first?: AttemptCommand): Promise<Driven> {
  const gathered: Performed[] = [];
  let called = false;
  for (;;) {
    const command = gathered.length === 0 && first !== undefined ? first : nextAttempt(snapshot, gathered);
    if (command.kind === "done") return { done: command, gathered, called };
    if (command.kind === "ask") return { done: command.done, asked: command.question, gathered, called };
    if (command.kind === "probe") {
      gathered.push(await performProbe(port, snapshot, command));
      continue;
    }
    for (const decision of command.announce) port.announce?.(decision);
    if (command.kind === "sleep") {
      await port.clock.sleep(command.ms, port.stop ?? port.wake);
      if (port.stop?.aborted) return endStopped(snapshot, gathered, port, called);
      gathered.push({ kind: "slept", at: port.now() });
      continue;
    }
    if (port.stop?.aborted && !called) return endStopped(snapshot, gathered, port, called);
    // A call made again after the probe is the same attempt: it was started already.
    if (command.notHappened !== true) port.starting?.(command);
    called = true;
    gathered.push(await performCall(port, snapshot, command));
  }
}

/**
 * The verify probe, under the call's deadline, and what its answer writes under the key: the output
 * of a call that happened; the cut's error of a call just cut that did not (the ladder decides whether
 * it goes out again). An intent found in doubt that did not happen is written by the call made again.
 */
async function performProbe(port: AttemptPort, s: AttemptSnapshot, c: ProbeCommand): Promise<Performed> {
  let read: ProbeRead;
  try {
    read = readProbe(await probeWithin(port, c));
  } catch (thrown) {
    read = probeThrew(errorInfo(thrown));
  }
  const result =
    read.kind === "happened"
      ? { ok: true as const, output: read.output }
      : read.kind === "not-happened" && c.cut
        ? { ok: false as const, error: c.cut }
        : undefined;
  // A result that cannot be written leaves the intent in doubt: a later lookup asks rather than charges again.
  if (result && port.journal) await port.journal.result(s.threadId, c.key, result).catch(() => undefined);
  return { kind: "probed", at: port.now(), read };
}

/**
 * Stopped during a backoff: the machine ends the drive — before any call the attempt fails with the
 * stop (the graph does not record it), after one with the failure being retried.
 */
function endStopped(snapshot: AttemptSnapshot, gathered: Performed[], port: AttemptPort, called: boolean): Driven {
  gathered.push({ kind: "stopped", at: port.now(), error: errorInfo(new NotCalled()) });
  const done = nextAttempt(snapshot, gathered);
  if (done.kind !== "done") throw new Error(`the attempt machine answered a stop with ${done.kind}, not done`);
  return { done, gathered, called };
}

/** One call: through the effect journal when it has a key and the run a journal, else straight, under the deadline. */
async function performCall(port: AttemptPort, s: AttemptSnapshot, c: CallCommand): Promise<Performed> {
  if (c.key === undefined || !port.journal) {
    const outcome = await withDeadline(port, c, c.key, (signal) => port.call(c, c.key, signal));
    return { kind: "called", at: port.now(), outcome, ...(c.key ? { key: c.key } : {}) };
  }
  const on = { threadId: s.threadId, step: s.step, approval: approvalOf(s.run) };
  return journaled(port, c.key, on, c);
}

/** A keyed call through the journal: its outcome, the key it settled under, and how its doubts were settled. */
export async function journaled(
  port: AttemptPort,
  key: string,
  on: {
    threadId: string;
    step: Pick<Step, "id" | "honoursIdempotencyKey" | "verify">;
    /** A person's approval of a call in doubt: one more call may go out under its key. */
    approval: Approved | undefined;
    undo?: boolean;
  },
  c: CallCommand,
): Promise<Extract<Performed, { kind: "called" }>> {
  let last: CallOutcome | undefined;
  const made = await journaledCall({
    journal: port.journal!,
    threadId: on.threadId,
    key,
    step: on.step,
    ...(on.undo ? { undo: true } : {}),
    tool: c.tool,
    args: c.args,
    attempt: c.attempt,
    ...(c.notHappened ? { notHappened: true } : {}),
    honoursKeys: port.honoursKeys,
    approval: on.approval,
    now: () => port.now(),
    call: async (k) => (last = await withDeadline(port, c, k, (signal) => port.call(c, k, signal))),
  });
  const at = port.now();
  const settled = made.settled.length > 0 ? { settled: made.settled } : {};
  if (made.kind === "unsettled") {
    const outcome = made.cut ?? { ok: false, error: { name: "EffectInDoubt", message: "" } };
    const doubt = made.cut ? ("cut" as const) : ("found" as const);
    return {
      kind: "called",
      at,
      outcome,
      key: made.key,
      effect: "unsettled",
      doubt,
      inDoubtAttempt: made.attempt,
      ...settled,
    };
  }
  if (made.kind === "in_doubt") {
    const error: ErrorInfo = { name: "EffectInDoubt", message: made.reason };
    const outcome: CallOutcome = { ok: false, error, calls: last?.calls ?? 1 };
    return { kind: "called", at, outcome, key: made.key, effect: "in_doubt", inDoubtAttempt: made.attempt, ...settled };
  }
  return {
    kind: "called",
    at,
    outcome: made.outcome,
    key: made.key,
    ...(made.effect ? { effect: made.effect } : {}),
    ...settled,
  };
}

/**
 * The call under the one deadline: past `timeoutMs` its signal aborts and it ends with `StepTimeout`,
 * in doubt when it has side effects. A call that may be made again also aborts at the caller's stop; a
 * side effect under way runs to its end (docs/decisions/0028-a-stopped-run-keeps-its-results.md).
 */
function withDeadline(
  port: AttemptPort,
  c: CallCommand,
  key: string | undefined,
  run: (signal: AbortSignal) => Promise<CallOutcome>,
): Promise<CallOutcome> {
  return callWithin(c.timeoutMs, key === undefined ? port.stop : undefined, run);
}

/** One call under a deadline of `timeoutMs`, aborted too when `stop` aborts: the driver's one timeout. */
export async function callWithin(
  timeoutMs: number,
  stop: AbortSignal | undefined,
  run: (signal: AbortSignal) => Promise<CallOutcome>,
): Promise<CallOutcome> {
  const controller = new AbortController();
  // A listener rather than `AbortSignal.any`: merging signals per call cost measurable time per step.
  const stopped = () => controller.abort(stop?.reason);
  if (stop?.aborted) stopped();
  else stop?.addEventListener("abort", stopped, { once: true });
  // What the port throws is not an answer (a LangGraph interrupt, a bug): it goes up as it is.
  const pending = Promise.resolve().then(() => run(controller.signal));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<CallOutcome>((resolve) => {
    timer = setTimeout(() => {
      const timeout = new StepTimeout(timeoutMs);
      controller.abort(timeout);
      resolve({ ok: false, error: errorInfo(timeout), timeout: true, cut: true });
    }, timeoutMs);
  });
  try {
    const outcome = await Promise.race([pending, expired]);
    if (outcome.ok || outcome.cut !== undefined) return outcome;
    return { ...outcome, cut: outcome.timeout === true || cutByTheTool(outcome.error) };
  } finally {
    clearTimeout(timer);
    stop?.removeEventListener("abort", stopped);
    pending.catch(() => undefined);
  }
}

/** The probe under the call's deadline: its answer, or the error it threw (or its timeout). */
async function probeWithin(port: AttemptPort, c: ProbeCommand): Promise<unknown> {
  const run = async (signal: AbortSignal) => ({
    ok: true as const,
    output: await port.probe(c.tool, c.args, c.key, signal),
  });
  const answered = await callWithin(c.timeoutMs, undefined, run);
  if (answered.ok) return answered.output;
  throw Object.assign(new Error(answered.error.message), { name: answered.error.name });
}
