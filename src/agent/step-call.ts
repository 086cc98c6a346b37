/**
 * One tool call of a plan step, through the ladder: each attempt's result is judged with the
 * graph's step checks and classified by the same `classify`; a transient failure is retried here
 * after the policy's backoff (the model sees one result), a fallback tool is tried, and what is
 * left — a replan, an escalation, a skip — is settled in `settle.ts`.
 */
import { factValues, makeFacts } from "../plan/facts.js";
import { operationKey } from "../plan/operation.js";
import type { ErrorInfo, Step, StepRun } from "../plan/schema.js";
import { activeAssumptionChecks, assumptionDeviation } from "../policy/assumptions.js";
import { classify } from "../policy/classify.js";
import type { Decision } from "../policy/decision.js";
import { producerAssumptions, type Deviation } from "../policy/deviation.js";
import { attemptCost } from "../policy/budget.js";
import { checkBudget, checkInputs, checkPreconditions, judgeOutput, type CheckFailure } from "../policy/step-checks.js";
import { decide } from "./decisions.js";
import { settle, standing, type CallEnv, type CallResult, type Succeeded } from "./settle.js";

/**
 * What one attempt of a tool gave back; `calls`: how often the tool ran in it (a retrying middleware
 * below may call it more than once; each call is an attempt of the step). Default 1.
 */
export type AttemptResult = ({ ok: true; content: string; output: unknown } | { ok: false; error: ErrorInfo }) & {
  calls?: number;
};

interface Deviated {
  kind: "deviation";
  deviation: Deviation;
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

async function ladder(
  env: CallEnv,
  step: Step,
  tool: string,
  modelArgs: Record<string, unknown>,
  meter: Meter,
): Promise<CallResult> {
  const { state, options } = env;
  const trusted = factValues(state.facts);
  const inputs = Object.fromEntries((step.inputs ?? []).filter((k) => k in trusted).map((k) => [k, trusted[k]]));
  const args = { ...modelArgs, ...inputs };
  // The model may call a step's fallback tool itself: the step then runs on its fallback.
  const onFallback = tool !== step.tool;
  let run: StepRun = {
    status: "pending",
    attempts: 0,
    ...state.steps[step.id],
    ...(onFallback ? { usedFallback: true } : {}),
  };
  const decisions: Decision[] = [];
  const pre = checkInputs(step, state.facts, trusted) ?? checkPreconditions(step, trusted);
  let pending: Deviated | undefined = pre ? deviated(pre, step.id, run.attempts) : undefined;
  let call = { tool, args: onFallback ? { ...args, ...step.fallback?.args } : args };
  for (;;) {
    const attempted = pending ? { run, judged: pending } : await oneAttempt(env, step, run, call, meter, decisions);
    const judged = attempted.judged;
    run = attempted.run;
    pending = undefined;
    if (judged.kind === "success") return judged.result;
    const verdict = classify({
      deviation: judged.deviation,
      step,
      run,
      policy: options.policy,
      replan: standing(state, options.policy),
      decisionCount: state.decisions.length + decisions.length,
      producerAssumptions: producerAssumptions(env.state.plan!, env.state.facts ?? {}, judged.deviation),
    });
    const place = { stepId: step.id, attempt: run.attempts, planVersion: state.plan!.version, at: env.at() };
    decisions.push(decide(verdict, place));
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

/**
 * One attempt of the call: held when it would take the run past `budget.maxCost`, else started,
 * charged per started attempt (as the graph charges) and judged.
 */
async function oneAttempt(
  env: CallEnv,
  step: Step,
  before: StepRun,
  call: { tool: string; args: Record<string, unknown> },
  meter: Meter,
  decisions: Decision[],
): Promise<{ run: StepRun; judged: Judged }> {
  const key = sideEffectKey(env, step, call.tool, call.args);
  const reused = key === undefined ? undefined : reuse(env, step, before, key, decisions);
  if (reused) return reused;
  const charge = attemptCost(step, call.tool !== step.tool);
  const over = checkBudget(step, meter.spent, env.options.policy.budget.maxCost, charge);
  if (over) return { run: before, judged: deviated(over, step.id, before.attempts) };
  let run: StepRun = {
    ...before,
    status: "running",
    attempts: before.attempts + 1,
    startedAt: before.startedAt ?? env.at(),
  };
  if (charge > 0) {
    meter.spent += charge;
    meter.charged += charge;
    run = { ...run, cost: (run.cost ?? 0) + charge };
  }
  const result = await env.invoke(call.tool, call.args, key);
  // Calls a middleware below made on its own are attempts too: counted against retry.maxAttempts and charged.
  const extra = Math.max(0, Math.min((result.calls ?? 1) - 1, MAX_CALLS));
  if (extra > 0) {
    meter.spent += charge * extra;
    meter.charged += charge * extra;
    run = { ...run, attempts: run.attempts + extra, ...(charge > 0 ? { cost: (run.cost ?? 0) + charge * extra } : {}) };
  }
  return { run, judged: judge(env, step, run, result, key, decisions) };
}

/**
 * The same operation (the same key) committed before, under any step: its recorded output is this
 * call's result, judged like one, and the tool is not called again (`effect.reused`). A record from
 * before outputs were kept goes out under its key, for a tool that honours keys to answer.
 */
function reuse(
  env: CallEnv,
  step: Step,
  before: StepRun,
  key: string,
  decisions: Decision[],
): { run: StepRun; judged: Judged } | undefined {
  const committed = env.state.sideEffects.find((e) => e.idempotencyKey === key);
  if (committed?.output === undefined) return undefined;
  const run: StepRun = { ...before, status: "running", attempts: before.attempts + 1, startedAt: env.at() };
  const by = committed.stepId === step.id ? "this step" : `step "${committed.stepId}"`;
  const reason =
    `the same operation was committed by ${by} under key ${key}; its output is reused and the tool ` +
    "is not called again";
  const place = { stepId: step.id, attempt: run.attempts, planVersion: env.state.plan!.version, at: env.at() };
  decisions.push(decide({ rule: "effect.reused", reason }, place));
  const content = JSON.stringify(committed.output) ?? "null";
  return { run, judged: judge(env, step, run, { ok: true, content, output: committed.output }, undefined, decisions) };
}

function deviated(check: CheckFailure, stepId: string, attempt: number): Deviated {
  return { kind: "deviation", deviation: { ...check.deviation, stepId, attempt }, error: check.error };
}

function errorOf(error: ErrorInfo | undefined): { error?: ErrorInfo } {
  return error ? { error } : {};
}

/** The result judged by the graph's checks; on success, the facts and the assumption checks they settle. */
function judge(
  env: CallEnv,
  step: Step,
  run: StepRun,
  result: AttemptResult,
  key: string | undefined,
  decisions: Decision[],
): Judged {
  const { state } = env;
  const attempt = run.attempts;
  if (!result.ok)
    return {
      kind: "deviation",
      deviation: { kind: "error", stepId: step.id, attempt, message: result.error.message, error: result.error },
      error: result.error,
    };
  const trusted = factValues(state.facts);
  const judged = judgeOutput(step, result.output, trusted);
  if (!judged.ok)
    return { kind: "deviation", deviation: { ...judged.deviation, stepId: step.id, attempt }, error: judged.error };
  const version = state.plan!.version;
  const facts = makeFacts(judged.values, {
    producedBy: step.id,
    planVersion: version,
    assumptions: step.assumptions ?? [],
  });
  const done: StepRun = { ...run, status: "succeeded", output: judged.output, endedAt: env.at() };
  delete done.error;
  const after = { ...state.steps, [step.id]: done };
  const broken = activeAssumptionChecks(state.plan!, after, state.planRun.falsified, { ...trusted, ...judged.values });
  const deviation = assumptionDeviation(broken, step.id, attempt);
  // A committed effect is recorded whatever the assumption checks say next: it happened.
  const sideEffects = key ? [{ stepId: step.id, idempotencyKey: key, at: env.at(), output: judged.output }] : [];
  if (deviation) return { kind: "deviation", deviation, succeeded: { run: done, values: judged.values, sideEffects } };
  return {
    kind: "success",
    result: {
      content: result.content,
      status: "success",
      update: { steps: { [step.id]: done }, facts, decisions, sideEffects },
    },
  };
}

/** Tools in `sideEffectTools`, and steps that declare side effects and are not idempotent, get a key. */
function sideEffectKey(env: CallEnv, step: Step, tool: string, args: Record<string, unknown>): string | undefined {
  const declared = (step.sideEffects?.length ?? 0) > 0 && step.idempotent === false && tool === step.tool;
  if (!env.options.sideEffectTools.has(tool) && !declared) return undefined;
  return operationKey(env.threadId, tool, args, step.operation);
}
