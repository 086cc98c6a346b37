/**
 * The attempt as a pure step machine (docs/decisions/0044-one-attempt-driver.md): what the driver
 * (runtime/run-attempt.ts) does next, given where the step stood when the drive began (the snapshot)
 * and what the driver has performed since (the gathered calls and sleeps). Same snapshot and gathered,
 * same command: the driver keeps no judgement of its own, it performs and feeds back.
 *
 * Built on `beforeAttempt` (the checks and the key), `attempt` (the judged result and, with the run's
 * standing, the ladder's verdict). With a standing (the createAgent middleware) a retry or fallback
 * verdict goes on in the same drive — `sleep`, then the next `call`; without one (the graph) the drive
 * ends with the judged deviation, which the classifier node decides, one attempt per visit.
 *
 * A call in doubt that the journal leaves to the step's read-only `verify` is probed by a `probe`
 * command, and what the probe said is decided here; a call still in doubt ends the drive with `ask`,
 * the question a person is asked (docs/decisions/0068-probe-as-a-command.md).
 */
import type { ErrorInfo, StepRun } from "../../plan/schema/run.js";
import { attemptCost } from "../ladder/budget.js";
import type { Verdict } from "../ladder/classify.js";
import { decide } from "../ladder/decide.js";
import type { Decision } from "../ladder/decision.js";
import type { Deviation } from "../ladder/deviation.js";
import { inDoubtQuestion, journaledVerdict, probeArgs, settledVerdict } from "../ladder/in-doubt.js";
import {
  attempt as judgeAttempt,
  beforeAttempt,
  ladderDecisionCount,
  ladderVerdict,
  reuseVerdict,
  type Before,
  type CallOutcome,
  type RunStanding,
} from "./attempt.js";
import { withoutApproval } from "./approval.js";
import type {
  AskCommand,
  AttemptCommand,
  AttemptSnapshot,
  CallCommand,
  DoneCommand,
  Ending,
  Performed,
  ProbeCommand,
} from "./attempt-commands.js";

// The machine's vocabulary lives beside it; its names are still exported from here.
export type {
  AskCommand,
  AttemptCommand,
  AttemptSnapshot,
  CallCommand,
  DoneCommand,
  Ending,
  InDoubtAsk,
  Performed,
  ProbeCommand,
  SettledDoubt,
} from "./attempt-commands.js";

type Called = Extract<Performed, { kind: "called" }>;

/** A bound on the calls one attempt reports (a retrying middleware below may claim any number). */
const MAX_CALLS = 1000;

/** The drive as the machine replays it. */
interface Drive {
  s: AttemptSnapshot;
  gathered: readonly Performed[];
  next: number;
  run: StepRun;
  call: { tool: string; args: Record<string, unknown> };
  decisions: Decision[];
  announced: Decision[];
  /** Announced decisions not yet carried by a command. */
  news: Decision[];
  spent: number;
  charged: number;
  at: string;
}

export function nextAttempt(snapshot: AttemptSnapshot, gathered: readonly Performed[]): AttemptCommand {
  const d: Drive = {
    s: snapshot,
    gathered,
    next: 0,
    run: snapshot.run,
    call: snapshot.call,
    decisions: [],
    announced: [],
    news: [],
    spent: snapshot.spent,
    charged: 0,
    at: snapshot.at,
  };
  for (;;) {
    const step = oneAttempt(d);
    if (step.kind !== "judged") return step;
    const goes = onVerdict(d, step.ending, step.last);
    if (goes !== "again") return goes.kind === "done" ? askedOrDone(d, goes) : goes;
  }
}

/** A drive that ends on a call in doubt asks a person about it. */
function askedOrDone(d: Drive, ended: DoneCommand): AskCommand | DoneCommand {
  const { ending, call } = ended;
  if (ending.kind !== "deviation" || ending.deviation.kind !== "effect_in_doubt") return ended;
  const { key, journalAttempt, message } = ending.deviation;
  const at = journalAttempt === undefined ? {} : { journalAttempt };
  const question = { stepId: d.s.step.id, tool: call.tool, args: call.args, key, ...at, reason: message };
  return { kind: "ask", question, done: ended };
}

type Stage = AttemptCommand | { kind: "judged"; ending: Ending; last?: Extract<Performed, { kind: "called" }> };

function oneAttempt(d: Drive): Stage {
  const { s } = d;
  const { step } = s;
  const charge = attemptCost(step, d.call.tool !== step.tool);
  const before = beforeAttempt({
    step,
    run: s.steps[step.id],
    threadId: s.threadId,
    tool: d.call.tool,
    args: d.call.args,
    facts: s.facts,
    trusted: s.trusted,
    spent: d.spent,
    charge,
    maxCost: s.maxCost,
    committed: s.committed,
    compensations: s.compensations,
    steps: s.steps,
    ...(s.again ? { again: true } : {}),
    ...(s.now !== undefined ? { now: s.now } : {}),
  });
  if (before.kind === "refused") {
    const deviation = { ...before.failure.deviation, stepId: step.id, attempt: d.run.attempts } as Deviation;
    const verdict = s.standing ? verdictOf(d, deviation) : undefined;
    return { kind: "judged", ending: { kind: "refused", before, deviation, ...(verdict ? { verdict } : {}) } };
  }
  if (before.kind === "reuse") return reused(d, before);
  return called(d, before, charge);
}

/** A committed operation's output answers the call: the graph records it itself; the middleware judges it here. */
function reused(d: Drive, before: Extract<Before, { kind: "reuse" }>): Stage {
  const { step } = d.s;
  if (!d.s.standing) return done(d, { kind: "reused", before });
  d.run = { ...d.run, status: "running", attempts: d.run.attempts + 1, startedAt: d.at };
  const { rule, reason } = reuseVerdict(step.id, before.reuse.stepId, before.key);
  d.decisions.push(decisionOf(d, { rule, reason, failureClass: "none" }));
  return { kind: "judged", ending: judge(d, { ok: true, output: before.output }) };
}

/** The call started and charged; once performed, its extra calls counted, its settlements recorded, its result judged. */
function called(d: Drive, before: Extract<Before, { kind: "call" }>, charge: number): Stage {
  const { s } = d;
  const again = s.again === true && d.decisions.length === 0 && d.next === 0;
  const delay = d.next === 0 && !s.again ? s.run.nextDelayMs : undefined;
  // The graph's backoff, scheduled by the classifier on the run's record, is waited before the first call.
  const waited = d.gathered[0]?.kind;
  if (delay && waited !== "slept" && waited !== "stopped") return { kind: "sleep", ms: delay, announce: [] };
  if (delay && waited === "slept") d.next += 1;
  const { nextDelayMs: _delay, ...rest } = withoutApproval(d.run);
  const cost = again ? 0 : charge;
  d.run = {
    ...rest,
    status: "running",
    attempts: again ? d.run.attempts : d.run.attempts + 1,
    startedAt: d.run.startedAt ?? d.at,
    ...(cost > 0 ? { cost: (d.run.cost ?? 0) + cost } : {}),
  };
  d.spent += cost;
  d.charged += cost;
  const first = d.gathered[d.next];
  // Stopped before this call: the attempt fails with the stop, and the drive ends (no verdict acts on it).
  if (first?.kind === "stopped") return done(d, judge(d, { ok: false, error: first.error }));
  if (first?.kind !== "called") return callOf(d, before, cost, d.news.splice(0));
  d.next += 1;
  d.news = [];
  const performed = first.effect === "unsettled" ? probed(d, first, callOf(d, before, 0, [])) : first;
  if (performed.kind !== "called") return performed;
  d.at = performed.at;
  countExtraCalls(d, performed.outcome.calls, charge);
  const key = performed.key ?? before.key;
  for (const settled of performed.settled ?? [])
    settledDecision(d, settledVerdict(settled.how, d.call.tool, settled.key));
  if (performed.effect === "in_doubt") return { kind: "judged", ending: inDoubt(d, performed, key), last: performed };
  if (performed.effect === "journaled" && key) settledDecision(d, journaledVerdict(d.call.tool, key));
  return { kind: "judged", ending: judge(d, performed.outcome), last: { ...performed, ...(key ? { key } : {}) } };
}

function callOf(
  d: Drive,
  before: Extract<Before, { kind: "call" }>,
  charge: number,
  announce: Decision[],
): CallCommand {
  const { tool, args } = d.call;
  return {
    kind: "call",
    tool,
    args,
    key: before.key,
    operation: before.operation,
    timeoutMs: d.s.timeoutMs,
    attempt: d.run.attempts,
    charge,
    announce,
  };
}

/**
 * A call in doubt the journal left to the step's verify probe, settled by what the probe said:
 * happened — its output is the call's (`effect.verified`); did not happen — a call just cut fails
 * with its cut, for the ladder to decide (`effect.not-happened`), an intent found in the journal goes
 * out again under its key in the same attempt; nothing readable — a person is asked (`effect.in-doubt`).
 * The calls and probes so far come back as one call, its settlements in the order they happened.
 */
function probed(d: Drive, first: Called, again: CallCommand): Called | ProbeCommand | CallCommand {
  let call = first;
  const settled = [...(first.settled ?? [])];
  for (;;) {
    const key = call.key!;
    const read = d.gathered[d.next];
    if (read?.kind !== "probed") return probeOf(d, call);
    d.next += 1;
    const at = read.at;
    const base = { kind: "called" as const, at, key };
    if (read.read.kind === "happened") {
      settled.push({ how: "verified", key });
      return { ...base, outcome: { ok: true, output: read.read.output }, effect: "verified", settled };
    }
    if (read.read.kind === "unreadable") {
      const error = { name: "EffectInDoubt", message: inDoubtQuestion(d.call.tool, key, read.read.problem) };
      const outcome: CallOutcome = { ok: false, error, calls: call.outcome.calls ?? 1 };
      const asked = { ...base, outcome, effect: "in_doubt" as const, inDoubtAttempt: call.inDoubtAttempt! };
      return settled.length > 0 ? { ...asked, settled } : asked;
    }
    settled.push({ how: "not-happened", key });
    if (call.doubt === "cut") return { ...base, outcome: call.outcome, settled };
    const next = d.gathered[d.next];
    if (next?.kind !== "called") return { ...again, key, notHappened: true };
    d.next += 1;
    settled.push(...(next.settled ?? []));
    if (next.effect !== "unsettled") return { ...next, settled };
    call = next;
  }
}

/** The probe of a call in doubt: the step's verify, which the journal found it declares. */
function probeOf(d: Drive, call: Called): ProbeCommand {
  const verify = d.s.step.verify;
  if (!verify) throw new Error(`step "${d.s.step.id}" has no verify probe, yet its call was left to one`);
  const cut = call.doubt === "cut" && !call.outcome.ok ? { cut: call.outcome.error } : {};
  return {
    kind: "probe",
    tool: verify.tool,
    args: probeArgs(verify, d.s.trusted),
    key: call.key!,
    timeoutMs: d.s.timeoutMs,
    ...cut,
  };
}

/** Calls a retrying middleware below made on its own are attempts too: counted against `retry.maxAttempts` and charged. */
function countExtraCalls(d: Drive, calls: number | undefined, charge: number): void {
  const extra = Math.max(0, Math.min((calls ?? 1) - 1, MAX_CALLS));
  if (extra === 0) return;
  d.spent += charge * extra;
  d.charged += charge * extra;
  const cost = charge > 0 ? { cost: (d.run.cost ?? 0) + charge * extra } : {};
  d.run = { ...d.run, attempts: d.run.attempts + extra, ...cost };
}

/** A call whose outcome is unknown and that nothing settled: the step deviates, and the ladder asks a person. */
function inDoubt(d: Drive, performed: Extract<Performed, { kind: "called" }>, key: string | undefined): Ending {
  const error = performed.outcome.ok ? { name: "EffectInDoubt", message: "" } : performed.outcome.error;
  const deviation: Deviation = {
    kind: "effect_in_doubt",
    stepId: d.s.step.id,
    attempt: d.run.attempts,
    message: error.message,
    error,
    key: key ?? "",
    tool: d.call.tool,
    ...(performed.inDoubtAttempt === undefined ? {} : { journalAttempt: performed.inDoubtAttempt }),
  };
  const verdict = d.s.standing ? verdictOf(d, deviation) : undefined;
  return { kind: "deviation", deviation, error, ...(verdict ? { verdict } : {}) };
}

/** The outcome judged by the policy's attempt function, with the verdict when the drive has a standing. */
function judge(d: Drive, outcome: CallOutcome): Ending {
  const { s } = d;
  const judged = judgeAttempt({
    step: s.step,
    run: d.run,
    result: outcome,
    plan: s.plan,
    facts: s.facts,
    trusted: s.trusted,
    ...(s.standing ? { steps: s.steps, falsified: s.falsified ?? [], standing: standingNow(d) } : {}),
  });
  return judged;
}

/**
 * The ladder's verdict, where the drive goes on: a retry sleeps and calls again, a fallback calls its
 * tool; anything else (or no standing) ends the drive.
 */
function onVerdict(
  d: Drive,
  ending: Ending,
  last: Extract<Performed, { kind: "called" }> | undefined,
): AttemptCommand | "again" {
  if (ending.kind === "succeeded") d.run = succeededRun(d, ending.output);
  const verdict = "verdict" in ending ? ending.verdict : undefined;
  if ((ending.kind === "succeeded" && !ending.broken) || !verdict || !d.s.standing) return done(d, ending, last);
  const { step } = d.s;
  const decision = decisionOf(d, verdict);
  d.decisions.push(decision);
  if (ending.kind !== "succeeded") {
    const error = ending.kind === "reused" ? undefined : errorOf(ending);
    d.run = { ...d.run, status: "failed", endedAt: d.at, ...(error ? { error } : {}) };
  }
  const goesOn = verdict.action === "retry" || (verdict.action === "fallback" && step.fallback !== undefined);
  if (!goesOn) return done(d, ending, last);
  d.announced.push(decision);
  d.news.push(decision);
  d.run = { ...d.run, status: "pending" };
  if (verdict.action === "fallback") {
    d.run = { ...d.run, usedFallback: true };
    d.call = { tool: step.fallback!.tool, args: { ...d.s.args, ...step.fallback!.args } };
    return "again";
  }
  const slept = d.gathered[d.next];
  // Stopped during the backoff (its sleep command carried the news): the drive ends with the failure it
  // was retrying, the step still pending.
  if (slept?.kind === "stopped") {
    d.news = [];
    return done(d, ending, last);
  }
  if (slept?.kind !== "slept") return { kind: "sleep", ms: verdict.delayMs ?? 0, announce: d.news.splice(0) };
  d.next += 1;
  d.news = [];
  d.at = slept.at;
  return "again";
}

/** The record of a judged success: its output kept, its earlier error gone. */
function succeededRun(d: Drive, output: unknown): StepRun {
  const { error: _error, ...run } = d.run;
  return { ...run, status: "succeeded", output, endedAt: d.at };
}

function errorOf(ending: Extract<Ending, { kind: "deviation" | "refused" }>): ErrorInfo | undefined {
  return ending.kind === "deviation" ? ending.error : ending.before.failure.error;
}

function done(d: Drive, ending: Ending, last?: Extract<Performed, { kind: "called" }>): DoneCommand {
  return {
    kind: "done",
    ending,
    run: d.run,
    call: d.call,
    ...(last ? { last } : {}),
    decisions: d.decisions,
    // News no command carried (a fallback refused or answered before its call) was never sent.
    announced: d.announced.filter((decision) => !d.news.includes(decision)),
    charged: d.charged,
  };
}

/** Where the run stands for the ladder, counting the decisions this drive took so far. */
function standingNow(d: Drive): RunStanding {
  const s = d.s.standing!;
  const decisions = [...(s.decisions ?? []), ...d.decisions];
  return { ...s, decisionCount: s.decisionCount + ladderDecisionCount(d.decisions), decisions };
}

function verdictOf(d: Drive, deviation: Deviation): Verdict {
  const { s } = d;
  return ladderVerdict(s.step, d.run, s.plan, s.facts, deviation, standingNow(d));
}

function settledDecision(d: Drive, verdict: ReturnType<typeof journaledVerdict | typeof settledVerdict>): void {
  d.decisions.push(decisionOf(d, verdict));
}

/** A decision of this drive; `seq` is assigned where it lands in state. */
function decisionOf(
  d: Drive,
  v: Pick<Verdict, "rule" | "reason"> &
    Partial<Pick<Verdict, "failureClass" | "action" | "delayMs" | "brokenAssumption" | "evidence" | "by">>,
): Decision {
  return decide(v.rule, {
    ...v,
    after: -1,
    stepId: d.s.step.id,
    attempt: d.run.attempts,
    failureClass: v.failureClass ?? "none",
    planVersion: d.s.plan.version,
    at: d.at,
  });
}
