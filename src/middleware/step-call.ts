/**
 * One tool call of a plan step, through the ladder: each attempt goes through the policy's one
 * attempt function (`policy/attempt/attempt.ts`, the graph executor's too) — the checks before the call,
 * the operation's key, the judged result and the rule-table verdict; a transient failure is
 * retried here after the policy's backoff (the model sees one result), a fallback tool is tried,
 * and what is left — a replan, an escalation, a skip — is settled in `settle.ts`.
 */
import { factValues, makeFacts } from "../plan/facts.js";
import type { ErrorInfo, StepRun } from "../plan/schema/run.js";
import type { Step } from "../plan/schema/step.js";
import {
  attempt,
  beforeAttempt,
  effectKey,
  ladderDecisionCount,
  ladderVerdict,
  reuseVerdict,
  type RunStanding,
} from "../policy/attempt/attempt.js";
import type { Verdict } from "../policy/ladder/classify.js";
import type { Decision } from "../policy/ladder/decision.js";
import type { Deviation } from "../policy/ladder/deviation.js";
import { attemptCost } from "../policy/ladder/budget.js";
import type { CheckFailure } from "../policy/attempt/checks.js";
import { journaledVerdict, settledVerdict } from "../policy/ladder/in-doubt.js";
import { decide } from "./decisions.js";
import { journaledAttempt, type JournaledAttempt } from "./journal.js";
import { settle, standing, type AttemptResult, type CallEnv, type CallResult, type Succeeded } from "./settle.js";

export type { AttemptResult } from "./settle.js";

interface Deviated {
  kind: "deviation";
  deviation: Deviation;
  verdict: Verdict;
  error?: ErrorInfo;
  /** A call that succeeded but proved an assumption false: its record, the facts and the effect it produced. */
  succeeded?: Succeeded;
}
type Judged = { kind: "success"; result: CallResult } | Deviated;

/** A bound on the calls one attempt reports (a message may claim any number). */
const MAX_CALLS = 1000;

/** What this call's attempts charged, against what the run had spent when it began. */
interface Meter {
  spent: number;
  charged: number;
}

export async function runStep(
  env: CallEnv,
  step: Step,
  tool: string,
  modelArgs: Record<string, unknown>,
): Promise<CallResult> {
  const meter: Meter = { spent: env.state.budget?.spent ?? 0, charged: 0 };
  const result = await ladder(env, step, tool, modelArgs, meter);
  return recorded(env, step, result, meter);
}

/**
 * The call's charge for `budget.spent`, and a step success for the cooldown (one id per success,
 * so side-by-side calls all count).
 */
function recorded(env: CallEnv, step: Step, result: CallResult, meter: Meter): CallResult {
  const update = { ...result.update };
  const maxCost = env.options.policy.budget.maxCost;
  if (meter.charged > 0) update.budget = { charge: meter.charged, ...(maxCost === undefined ? {} : { maxCost }) };
  const run = update.steps?.[step.id];
  if (run?.status === "succeeded") {
    const success = `${env.state.plan!.version}:${step.id}:${run.attempts}`;
    update.planRun = { ...update.planRun, successes: [success] };
  }
  return { ...result, update };
}

/** The arguments a step's call runs with: the model's, under the plan's and the trusted facts the step reads. */
function stepArgs(env: CallEnv, step: Step, modelArgs: Record<string, unknown>): Record<string, unknown> {
  const trusted = factValues(env.state.facts);
  const inputs = Object.fromEntries((step.inputs ?? []).filter((k) => k in trusted).map((k) => [k, trusted[k]]));
  // The plan's arguments outrank the model's: a revision that changes them is a different call (and progress).
  return { ...modelArgs, ...step.args, ...inputs };
}

/** The idempotency key the call's first attempt goes out under; undefined for a step without side effects. */
export function firstKey(env: CallEnv, step: Step, tool: string, modelArgs: Record<string, unknown>) {
  const args = stepArgs(env, step, modelArgs);
  return effectKey(env.threadId, step, tool, tool !== step.tool ? { ...args, ...step.fallback?.args } : args)?.key;
}

async function ladder(
  env: CallEnv,
  step: Step,
  tool: string,
  modelArgs: Record<string, unknown>,
  meter: Meter,
): Promise<CallResult> {
  const { state, options } = env;
  const trusted = factValues(state.facts);
  const args = stepArgs(env, step, modelArgs);
  // The model may call a step's fallback tool itself: the step then runs on its fallback.
  const onFallback = tool !== step.tool;
  let run: StepRun = {
    status: "pending",
    attempts: 0,
    ...state.steps[step.id],
    ...(onFallback ? { usedFallback: true } : {}),
  };
  const decisions: Decision[] = [];
  let call = { tool, args: onFallback ? { ...args, ...step.fallback?.args } : args };
  for (;;) {
    const attempted = await oneAttempt(env, step, run, call, meter, decisions, trusted);
    const judged = attempted.judged;
    run = attempted.run;
    if (judged.kind === "success") return judged.result;
    const { verdict } = judged;
    const place = { stepId: step.id, attempt: run.attempts, planVersion: state.plan!.version, at: env.at() };
    const decision = decide(verdict, place);
    decisions.push(decision);
    if (verdict.action === "retry" || (verdict.action === "fallback" && step.fallback)) {
      // The call goes on: its decision is news now, not when the call ends.
      env.emit({ type: "decision", decision });
      env.sent.add(decision);
    }
    run = judged.succeeded?.run ?? { ...run, status: "failed", endedAt: env.at(), ...errorOf(judged.error) };
    if (verdict.action === "retry") {
      run = { ...run, status: "pending" };
      await options.sleep(verdict.delayMs ?? 0);
      continue;
    }
    if (verdict.action === "fallback" && step.fallback) {
      run = { ...run, status: "pending", usedFallback: true };
      call = { tool: step.fallback.tool, args: { ...args, ...step.fallback.args } };
      continue;
    }
    const { deviation, succeeded } = judged;
    return settle(env, { step, run, decisions, verdict, call, deviation, ...(succeeded ? { succeeded } : {}) });
  }
}

/** Where the run stands for the ladder, counting the decisions this call took so far. */
function runStanding(env: CallEnv, decisions: readonly Decision[]): RunStanding {
  const policy = env.options.policy;
  const decisionCount = ladderDecisionCount(env.state.decisions) + ladderDecisionCount(decisions);
  return {
    policy,
    replan: standing(env.state, policy),
    decisionCount,
    decisions: [...env.state.decisions, ...decisions],
  };
}

/**
 * One attempt of the call, through the policy's attempt function: refused before it starts (inputs,
 * preconditions, `budget.maxCost`, a changed committed operation), answered by a committed
 * operation's output (`effect.reused`), or started, charged per started attempt and judged.
 */
async function oneAttempt(
  env: CallEnv,
  step: Step,
  before: StepRun,
  call: { tool: string; args: Record<string, unknown> },
  meter: Meter,
  decisions: Decision[],
  trusted: Record<string, unknown>,
): Promise<{ run: StepRun; judged: Judged }> {
  const { state } = env;
  const charge = attemptCost(step, call.tool !== step.tool);
  const next = beforeAttempt({
    step,
    run: state.steps[step.id],
    threadId: env.threadId,
    tool: call.tool,
    args: call.args,
    facts: state.facts,
    trusted,
    spent: meter.spent,
    charge,
    maxCost: env.options.policy.budget.maxCost,
    committed: state.sideEffects,
    compensations: state.compensations,
    steps: state.steps,
  });
  if (next.kind === "refused") return { run: before, judged: refused(env, step, before, next.failure, decisions) };
  if (next.kind === "reuse") {
    const run: StepRun = { ...before, status: "running", attempts: before.attempts + 1, startedAt: env.at() };
    const { rule, reason } = reuseVerdict(step.id, next.reuse.stepId, next.key);
    const place = { stepId: step.id, attempt: run.attempts, planVersion: state.plan!.version, at: env.at() };
    decisions.push(decide({ rule, reason }, place));
    const content = JSON.stringify(next.output) ?? "null";
    const result: AttemptResult = { ok: true, content, output: next.output };
    return { run, judged: judge(env, step, run, result, undefined, decisions, trusted) };
  }
  // A person's approval of a key is for one call: this one (the journal reads it from the state).
  const { approvedKey: _approved, approvedAttempt: _numbered, ...unapproved } = before;
  let run: StepRun = {
    ...unapproved,
    status: "running",
    attempts: before.attempts + 1,
    startedAt: before.startedAt ?? env.at(),
  };
  if (charge > 0) {
    meter.spent += charge;
    meter.charged += charge;
    run = { ...run, cost: (run.cost ?? 0) + charge };
  }
  return called(env, step, run, call, next.key, { meter, charge, decisions, trusted });
}

/** The tool called for the attempt (started and charged), its extra calls counted, its result judged. */
async function called(
  env: CallEnv,
  step: Step,
  started: StepRun,
  call: { tool: string; args: Record<string, unknown> },
  key: string | undefined,
  c: { meter: Meter; charge: number; decisions: Decision[]; trusted: Record<string, unknown> },
): Promise<{ run: StepRun; judged: Judged }> {
  let run = started;
  const { meter, charge } = c;
  const running = env.running() + 1;
  env.emit({ type: "step_started", stepId: step.id, goal: step.goal, attempt: run.attempts, tool: call.tool, running });
  const timeoutMs = step.timeoutMs ?? env.options.policy.defaultTimeoutMs;
  const made =
    key && env.journal
      ? await journaledAttempt(env, env.journal, step, { ...call, key, attempt: run.attempts, timeoutMs }, c.trusted)
      : { result: await env.invoke(call.tool, call.args, key, timeoutMs), key };
  const result = made.result;
  // Calls a middleware below made on its own are attempts too: counted against retry.maxAttempts and charged.
  const extra = Math.max(0, Math.min((result.calls ?? 1) - 1, MAX_CALLS));
  if (extra > 0) {
    meter.spent += charge * extra;
    meter.charged += charge * extra;
    run = { ...run, attempts: run.attempts + extra, ...(charge > 0 ? { cost: (run.cost ?? 0) + charge * extra } : {}) };
  }
  for (const s of "settled" in made ? made.settled : [])
    c.decisions.push(settledDecision(env, step, run, settledVerdict(s.how, call.tool, s.key)));
  if ("inDoubt" in made && made.inDoubt) return { run, judged: inDoubt(env, step, run, call.tool, made, c.decisions) };
  if ("effect" in made && made.effect === "journaled")
    c.decisions.push(settledDecision(env, step, run, journaledVerdict(call.tool, made.key)));
  return { run, judged: judge(env, step, run, result, made.key, c.decisions, c.trusted) };
}

/**
 * A call whose outcome is unknown and that nothing settled: the step deviates with `effect_in_doubt`,
 * and the ladder asks a person (docs/decisions/0043-effects-in-the-middleware.md).
 */
function inDoubt(
  env: CallEnv,
  step: Step,
  run: StepRun,
  tool: string,
  made: JournaledAttempt,
  decisions: Decision[],
): Deviated {
  const error = made.inDoubt!;
  const deviation: Deviation = {
    kind: "effect_in_doubt",
    stepId: step.id,
    attempt: run.attempts,
    message: error.message,
    error,
    key: made.key,
    tool,
    ...(made.inDoubtAttempt === undefined ? {} : { journalAttempt: made.inDoubtAttempt }),
  };
  const { plan, facts } = env.state;
  const verdict = ladderVerdict(step, run, plan!, facts, deviation, runStanding(env, decisions));
  return { kind: "deviation", deviation, verdict, error };
}

/** The decision saying how the journal settled the call: a result the checkpoint lost, or a call in doubt settled. */
function settledDecision(
  env: CallEnv,
  step: Step,
  run: StepRun,
  { rule, failureClass, reason }: ReturnType<typeof journaledVerdict | typeof settledVerdict>,
): Decision {
  const place = { stepId: step.id, attempt: run.attempts, planVersion: env.state.plan!.version, at: env.at() };
  return decide({ rule, failureClass, reason }, place);
}

/** A check refused the attempt before it started: its deviation and the ladder's verdict on it. */
function refused(env: CallEnv, step: Step, run: StepRun, check: CheckFailure, decisions: Decision[]): Deviated {
  const deviation = { ...check.deviation, stepId: step.id, attempt: run.attempts } as Deviation;
  const { plan, facts } = env.state;
  const verdict = ladderVerdict(step, run, plan!, facts, deviation, runStanding(env, decisions));
  return { kind: "deviation", deviation, verdict, error: check.error };
}

function errorOf(error: ErrorInfo | undefined): { error?: ErrorInfo } {
  return error ? { error } : {};
}

/** The result judged by the policy's attempt function; on success, the facts and the effect it committed. */
function judge(
  env: CallEnv,
  step: Step,
  run: StepRun,
  result: AttemptResult,
  key: string | undefined,
  decisions: Decision[],
  trusted: Record<string, unknown>,
): Judged {
  const { state } = env;
  const plan = state.plan!;
  const judged = attempt({
    step,
    run,
    result: result.ok
      ? { ok: true, output: result.output }
      : { ok: false, error: result.error, ...(result.timeout ? { timeout: true } : {}) },
    plan,
    facts: state.facts,
    trusted,
    steps: state.steps,
    falsified: state.planRun.falsified,
    standing: runStanding(env, decisions),
  });
  if (judged.kind === "deviation") {
    const { deviation, verdict, error } = judged;
    return { kind: "deviation", deviation, verdict: verdict!, error };
  }
  const facts = makeFacts(judged.values, {
    producedBy: step.id,
    planVersion: plan.version,
    assumptions: step.assumptions ?? [],
  });
  const done: StepRun = { ...run, status: "succeeded", output: judged.output, endedAt: env.at() };
  delete done.error;
  // A committed effect is recorded whatever the assumption checks say next: it happened.
  const sideEffects = key ? [{ stepId: step.id, idempotencyKey: key, at: env.at(), output: judged.output }] : [];
  if (judged.broken) {
    const succeeded = { run: done, values: judged.values, sideEffects };
    return { kind: "deviation", deviation: judged.broken, verdict: judged.verdict!, succeeded };
  }
  return {
    kind: "success",
    result: {
      content: result.ok ? result.content : "",
      status: "success",
      update: { steps: { [step.id]: done }, facts, decisions, sideEffects },
    },
  };
}
