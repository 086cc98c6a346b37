/**
 * One step attempt, start to end: the checks before the tool runs (pure, `policy/attempt/checks.ts`),
 * the call handed to the dispatcher, and the record written when it ends.
 */
import { usageCost } from "../../policy/ladder/budget.js";
import type { ErrorInfo, SideEffectRecord, StepRun } from "../../plan/schema/run.js";
import { journaledVerdict, settledVerdict } from "../../policy/ladder/in-doubt.js";
import type { Step } from "../../plan/schema/step.js";
import { stepPosition } from "../../plan/ready.js";
import {
  attempt as judgeAttempt,
  beforeAttempt,
  reuseVerdict,
  type Attempt,
  type CallOutcome,
} from "../../policy/attempt/attempt.js";
import { nextAttempt, type AttemptSnapshot, type CallCommand, type Ending } from "../../policy/attempt/next-attempt.js";
import { runAttempt, type AttemptPort, type Driven } from "../../runtime/run-attempt.js";
import { decide } from "../../policy/ladder/decide.js";
import type { DeviationDraft } from "../../policy/ladder/deviation.js";
import { agentCall } from "./agent-attempt.js";
import type { AgentWork, Dispatcher, Flight } from "../../runtime/dispatch.js";
import { watchForStall } from "../../runtime/stall-watch.js";
import type { Visit } from "./visit.js";
import { journalOf } from "../../runtime/effect-journal.js";
import { graphPort } from "./graph-port.js";
import { withoutApproval } from "../../policy/attempt/approval.js";
import { overlay, overlayParts } from "../../plan/overlay.js";
import { pin } from "../../plan/pinned.js";

/** The tool a step's next attempt calls: its fallback once the ladder switched to it; `agent:NAME` for an agent. */
export function toolFor(step: Step, run: StepRun | undefined): string | undefined {
  if (run?.usedFallback === true && step.fallback !== undefined) return step.fallback.tool;
  return step.agent !== undefined ? `agent:${step.agent}` : step.tool;
}

/**
 * Starts the step's next attempt, or records why it cannot start (a deviation, queued). `again`:
 * the checkpoint shows the attempt running but no call is in flight (the process that started it
 * is gone), so the same attempt is called again, not charged twice, under the same key. An agent
 * step's running record keeps the failure it retries, so a call made again sends the same feedback.
 */
export function startAttempt(v: Visit, flights: Dispatcher, step: Step, again = false): void {
  const { rt, config } = v;
  const previous: StepRun = v.steps[step.id] ?? { status: "pending", attempts: 0 };
  const { snapshot, release } = snapshotOf(v, step, previous, again);
  const first = nextAttempt(snapshot, []);
  if (first.kind === "done") return endedBefore(v, step, previous, first.ending, snapshot.call.tool, release);
  // What the call will be once the backoff is waited (pure: the driver computes the same).
  const call = first.kind === "call" ? first : (nextAttempt(snapshot, [{ kind: "slept", at: v.now() }]) as CallCommand);
  const { key, operation, attempt } = call;
  const { nextDelayMs: _delay, error: failure, ...rest } = withoutApproval(previous);
  const agent = step.agent !== undefined && !(previous.usedFallback === true && step.fallback !== undefined);
  const running: StepRun = {
    ...rest,
    ...(agent && failure ? { error: failure } : {}),
    status: "running",
    attempts: attempt,
    startedAt: v.now(),
    ...(call.charge > 0 ? { cost: (previous.cost ?? 0) + call.charge } : {}),
  };
  v.spent += call.charge;
  // An agent step's call always carries its operation's key (`beforeAttempt`).
  const work: AgentWork | undefined = agent ? { usage: [], key: (key ?? operation)! } : undefined;
  const tool = work ? agentCall(v, step, previous, attempt, work) : rt.tools.get(call.tool);
  if (!tool) {
    release();
    // Validation makes this unreachable for plans it accepted; kept as a hard stop at the registry boundary.
    const message = `tool "${call.tool}" is not in the registry`;
    const error = { name: "PermanentError", message };
    return v.fail(step, { deviation: { kind: "error", message, error }, error }, { ...running, endedAt: v.now() });
  }
  v.write(step.id, running);
  v.send({
    type: "step_started",
    stepId: step.id,
    goal: step.goal,
    attempt,
    tool: call.tool,
    running: flights.size + 1,
    planVersion: v.plan.version,
    ...(key ? { key } : {}),
  });
  const flight: Flight = { call: { stepId: step.id, tool: call.tool }, attempt, startedAt: running.startedAt! };
  Object.assign(flight, key ? { key } : {}, work ? { agent: work } : {});
  const configurable = {
    stepId: step.id,
    planVersion: v.plan.version,
    attempt,
    ...(key ? { idempotencyKey: key } : {}),
  };
  const journal = key && !work ? journalOf(config) : undefined;
  const port: AttemptPort = {
    ...graphPort(rt, config, { tool, configurable }, journal, () => v.now()),
    // The caller's stop ends the backoff (the driver then does not call the tool).
    stop: flights.stopSignal,
    // The attempt starts when its backoff ends; the stall watch reports it while it runs past its estimate.
    starting: () => {
      flight.startedAt = v.now();
      flight.called = true;
      flight.stopWatching = watchForStall(rt, config, step, attempt, rt.clock.now());
    },
  };
  const drive = () => runAttempt(port, snapshot, first).finally(release);
  flights.launch(flight, () => drive().then((driven) => landed(flight, driven)));
}

/** What the driver performed, on the flight the next visit records (`recordEnd`). */
function landed(flight: Flight, driven: Driven): CallOutcome {
  // The call the drive ended on, its verify probes folded in; else the stop that ended it.
  const last = driven.done.last ?? driven.gathered.findLast((p) => p.kind === "stopped");
  flight.called = driven.called;
  // Stopped during the backoff: the stop's error (the graph does not record an attempt never called).
  if (last?.kind === "stopped") return { ok: false, error: last.error };
  if (last?.kind !== "called") return { ok: false, error: { name: "Error", message: "not called" } };
  if (last.key !== undefined && last.key !== flight.key) flight.key = last.key;
  if (last.settled && last.settled.length > 0) flight.settled = [...last.settled];
  if (last.effect && last.effect !== "unsettled") flight.effect = last.effect;
  if (last.inDoubtAttempt !== undefined) flight.inDoubtAttempt = last.inDoubtAttempt;
  return last.outcome;
}

/** Where the step stands as its attempt begins, for the one driver; the graph's drive has no standing (one attempt per visit). */
function snapshotOf(
  v: Visit,
  step: Step,
  previous: StepRun,
  again: boolean,
): { snapshot: AttemptSnapshot; release: () => void } {
  const useFallback = previous.usedFallback === true && step.fallback !== undefined;
  const tool = toolFor(step, previous)!;
  const args = { ...(useFallback ? step.fallback!.args : step.args), ...pick(v.trusted, step.inputs ?? []) };
  // Held, not copied: the visit and later in-place merges go on writing the records while the
  // driver replays this snapshot (plan/pinned.ts); a copy would cost the run's length per attempt.
  const trusted = held(v.trusted);
  const steps = held(v.steps);
  const release = () => {
    trusted.release();
    steps.release();
  };
  const snapshot: AttemptSnapshot = {
    step,
    run: previous,
    threadId: String(v.config.configurable?.thread_id ?? "no-thread"),
    call: { tool, args },
    args,
    plan: v.plan,
    facts: v.state.facts,
    trusted: trusted.view,
    steps: steps.view,
    committed: committedOf(v),
    compensations: v.state.compensations,
    spent: v.spent,
    maxCost: v.rt.policy.budget.maxCost,
    timeoutMs: step.timeoutMs ?? v.rt.policy.defaultTimeoutMs,
    at: v.now(),
    ...(again ? { again } : {}),
    now: v.rt.clock.now(),
  };
  return { snapshot, release };
}

/** The visit's view of a record as it is now: the run's records pinned, the visit's own changes copied. */
function held<T>(record: Readonly<Record<string, T>>): { view: Readonly<Record<string, T>>; release: () => void } {
  const parts = overlayParts(record);
  if (!parts) return { view: { ...record }, release: () => undefined };
  const base = pin(parts.base);
  return { view: overlay(base.view, { ...parts.changes }), release: base.release };
}

/** The drive ended before a call: a check refused it, or a committed operation's output answers it. */
function endedBefore(v: Visit, step: Step, previous: StepRun, ending: Ending, tool: string, release: () => void) {
  release();
  if (ending.kind === "refused") return v.fail(step, ending.before.failure, { ...previous, status: "failed" });
  if (ending.kind === "reused") {
    const { reuse, output } = ending.before;
    reuseEffect(v, step, previous, reuse, output, tool);
  }
}

/** The policy's checks before the call, on the visit's records (its effects committed so far included). */
export function checkBefore(
  v: Visit,
  step: Step,
  call: { threadId: string; tool: string; args: Record<string, unknown>; charge: number; again: boolean },
) {
  return beforeAttempt({
    step,
    run: v.steps[step.id],
    ...call,
    facts: v.state.facts,
    trusted: v.trusted,
    spent: v.spent,
    maxCost: v.rt.policy.budget.maxCost,
    committed: committedOf(v),
    compensations: v.state.compensations,
    steps: v.steps,
    now: v.rt.clock.now(),
  });
}

/**
 * A step whose operation committed already, under this or another step id (a replan that handed
 * the same call back, a fork from before the commit): the tool is not called; the committed output
 * is judged as this step's and recorded, with an `effect.reused` decision saying so, and no new
 * entry in `sideEffects` (docs/decisions/0006-idempotency-keys-name-the-operation.md).
 */
export function reuseEffect(
  v: Visit,
  step: Step,
  previous: StepRun,
  record: SideEffectRecord,
  output: unknown,
  tool: string,
): void {
  const at = v.now();
  const { nextDelayMs: _delay, error: _error, ...rest } = withoutApproval(previous);
  const attempt = previous.attempts + 1;
  const ended: StepRun = { ...rest, status: "running", attempts: attempt, startedAt: at, endedAt: at };
  const judged = judge(v, step, ended, { ok: true, output });
  if (judged.kind === "deviation") return failJudged(v, step, judged, ended);
  const verdict = reuseVerdict(step.id, record.stepId, record.idempotencyKey, tool);
  const decision = decide(verdict.rule, {
    after: v.state.decisions.length + v.decisions.length,
    stepId: step.id,
    attempt,
    failureClass: verdict.failureClass,
    reason: verdict.reason,
    planVersion: v.plan.version,
    at,
  });
  v.decisions.push(decision);
  v.send({ type: "decision", decision });
  v.succeed(step, { ...ended, status: "succeeded", output: judged.output }, judged.values, record.idempotencyKey);
}

/** Writes an attempt that ended: AIMD on its tool, then success (facts, effects) or a queued deviation. */
export function recordEnd(v: Visit, flight: Flight): void {
  const at = stepPosition(v.plan, flight.call.stepId);
  const step = at === undefined ? undefined : v.plan.steps[at];
  const result = flight.result;
  if (!step || !result) return;
  const { error: _error, ...previous } = v.steps[step.id] ?? { status: "running" as const, attempts: flight.attempt };
  const ended: StepRun = {
    ...previous,
    startedAt: flight.startedAt,
    endedAt: v.now(),
    ...(flight.stalled ? { stalled: true } : {}),
  };
  v.progressAt = ended.endedAt;
  // The model calls of an agent attempt count against budget.maxCost like a step's cost: the next
  // attempt (of this step or another) is checked against what they spent.
  if (flight.agent) {
    v.usage.push(...flight.agent.usage);
    v.spent += usageCost(flight.agent.usage);
  }
  const tool = flight.call.tool;
  for (const settled of flight.settled ?? [])
    settledRecord(v, step, flight, settledVerdict(settled.how, tool, settled.key));
  if (!result.ok && flight.effect === "in_doubt") return inDoubt(v, step, flight, ended, result.error);
  if (!result.ok) {
    v.adjustLimit(step, flight.attempt, tool, result.error, flight.toolCallsAtEnd ?? 1);
    const { error } = result;
    const called: CallOutcome = {
      ok: false,
      error,
      message: `${step.id}: ${error.name}: ${error.message}`,
      ...(result.timeout ? { timeout: true } : {}),
    };
    // An agent that threw gave no answer: the one kept for feedback was the attempt before.
    const { output: _earlier, ...answerless } = ended;
    const failed = judge(v, step, ended, called);
    if (failed.kind === "deviation") return failJudged(v, step, failed, flight.agent ? answerless : ended);
    return;
  }
  const judged = judge(v, step, ended, { ok: true, output: result.output }, flight.agent?.validation);
  if (judged.kind === "deviation") return failJudged(v, step, judged, ended);
  v.adjustLimit(step, flight.attempt, tool, null, flight.toolCallsAtEnd ?? 1);
  if (flight.effect === "journaled") settledRecord(v, step, flight, journaledVerdict(tool, flight.key!));
  v.succeed(step, { ...ended, status: "succeeded", output: judged.output }, judged.values, flight.key);
}

/**
 * A call whose outcome is unknown and that nothing settled: the step deviates, and the ladder asks a
 * person (docs/decisions/0038-effect-journal.md).
 */
function inDoubt(v: Visit, step: Step, flight: Flight, ended: StepRun, error: ErrorInfo): void {
  const deviation = {
    kind: "effect_in_doubt" as const,
    message: error.message,
    error,
    key: flight.key!,
    tool: flight.call.tool,
    ...(flight.inDoubtAttempt === undefined ? {} : { journalAttempt: flight.inDoubtAttempt }),
  };
  v.fail(step, { deviation, error }, ended);
}

/**
 * The decision saying how the journal settled the call: a result the checkpoint lost reused, or a call in
 * doubt settled by the verify probe (either way) or called again under a key its tool honours.
 */
function settledRecord(
  v: Visit,
  step: Step,
  flight: Flight,
  verdict: ReturnType<typeof journaledVerdict | typeof settledVerdict>,
): void {
  const decision = decide(verdict.rule, {
    after: v.state.decisions.length + v.decisions.length,
    stepId: step.id,
    attempt: flight.attempt,
    failureClass: verdict.failureClass,
    reason: verdict.reason,
    planVersion: v.plan.version,
    at: v.now(),
  });
  v.decisions.push(decision);
  v.send({ type: "decision", decision });
}

/**
 * The policy's attempt function on the executor's side: judged here, decided by the classifier node
 * (a deviation waits in the queue while other steps run, and the LLM classifier may be asked).
 * Assumption checks after a success are the visit's (`Visit.succeed`), over every step it recorded.
 */
function judge(
  v: Visit,
  step: Step,
  run: StepRun,
  result: CallOutcome,
  validation?: Parameters<typeof judgeAttempt>[0]["validation"],
): Attempt {
  return judgeAttempt({
    step,
    run,
    result,
    plan: v.plan,
    facts: v.state.facts,
    trusted: v.trusted,
    ...(validation ? { validation } : {}),
  });
}

/** A judged deviation recorded: the step's record keeps what the tool returned, when it was storable. */
function failJudged(v: Visit, step: Step, judged: Extract<Attempt, { kind: "deviation" }>, ended: StepRun): void {
  const { deviation, error, output } = judged;
  const { stepId: _id, attempt: _attempt, ...draft } = deviation;
  v.fail(step, { deviation: draft as DeviationDraft, error }, output === undefined ? ended : { ...ended, output });
}

export function pick(values: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (Object.hasOwn(values, key)) out[key] = values[key];
  return out;
}

/** The run's committed effects with this visit's; copied only when the visit committed one (not per attempt). */
function committedOf(v: Visit): readonly SideEffectRecord[] {
  return v.effects.length === 0 ? v.state.sideEffects : [...v.state.sideEffects, ...v.effects];
}
