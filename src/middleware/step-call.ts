/**
 * One tool call of a plan step inside createAgent: a port of the one attempt driver
 * (runtime/run-attempt.ts; docs/decisions/0044-one-attempt-driver.md). The driver runs the ladder —
 * checks, key, journal, deadline, retries after the policy's backoff, the fallback — and hands back one
 * ending; what is left (a replan, an escalation, a skip) is settled in `settle.ts`. The model sees one
 * result.
 */
import { factValues, makeFacts } from "../plan/facts.js";
import type { StepRun } from "../plan/schema/run.js";
import type { Step } from "../plan/schema/step.js";
import { effectKey, ladderDecisionCount, type RunStanding } from "../policy/attempt/attempt.js";
import type { AttemptSnapshot, DoneCommand, InDoubtAsk } from "../policy/attempt/next-attempt.js";
import { runAttempt, type AttemptPort } from "../runtime/run-attempt.js";
import { settle, standing, type CallEnv, type ToolReply } from "./settle.js";
import { carriedDrive, keepStopped, stoppedDrive, type DriveOf, type StoppedDrive } from "./stopped-drive.js";

export async function runStep(
  env: CallEnv,
  step: Step,
  tool: string,
  modelArgs: Record<string, unknown>,
): Promise<ToolReply> {
  const drive = env.drive && { ...env.drive, stepId: step.id };
  const carried = drive && (await carriedDrive(env.journal, env.threadId, env.state, drive));
  const from = carried ? carriedOn(env, step, carried) : env;
  const snapshot = snapshotOf(from, step, tool, modelArgs);
  const { done, gathered, called, asked } = await runAttempt(portOf(from, step), snapshot);
  if (gathered.at(-1)?.kind === "stopped" && env.stop?.aborted) {
    // A stop during a backoff: what the drive did is kept for `invoke(null)` (stopped-drive.ts). The
    // caller has the stop already; a journal that cannot write loses the attempts, as before keeping them.
    if (called && env.journal && drive) await keep(env, drive, snapshot, done, carried).catch(() => undefined);
    throw stopReason(env.stop);
  }
  for (const decision of done.announced) env.sent.add(decision);
  if (!carried) return recorded(env, step, replyOf(env, step, done, asked), done.charged);
  const { nextDelayMs: _delay, ...run } = done.run;
  const decisions = [...carried.decisions, ...done.decisions];
  return recorded(from, step, replyOf(from, step, { ...done, run, decisions }, asked), carried.charged + done.charged);
}

/** Keeps what a stopped drive did in the run's journal (stopped-drive.ts), on top of what it went on from. */
function keep(env: CallEnv, of: DriveOf, snapshot: AttemptSnapshot, done: DoneCommand, carried?: StoppedDrive) {
  const base = { planVersion: snapshot.plan.version, from: env.state.steps[of.stepId]?.attempts ?? 0, carried };
  const call = { tool: snapshot.call.tool, args: snapshot.args, at: env.at() };
  return keepStopped(env.journal!, env.threadId, of, call, stoppedDrive(base, done));
}

/** The call's env as the stopped drive left the step: its record, its decisions and its charge in the state. */
function carriedOn(env: CallEnv, step: Step, carried: StoppedDrive): CallEnv {
  const { state } = env;
  const budget = { ...state.budget, spent: (state.budget?.spent ?? 0) + carried.charged };
  const decisions = [...state.decisions, ...carried.decisions];
  return { ...env, state: { ...state, steps: { ...state.steps, [step.id]: carried.run }, decisions, budget } };
}

/** What the stop aborted with, as an error (LangGraph hands the run's caller what the node threw). */
function stopReason(stop: AbortSignal): Error {
  const reason: unknown = stop.reason;
  return reason instanceof Error ? reason : new Error("the run was stopped", { cause: reason });
}

/** How the driver reaches the agent's tools, its clock and its stream. */
function portOf(env: CallEnv, step: Step): AttemptPort {
  return {
    call: (c, key, signal) => env.call(c.tool, c.args, key, signal),
    probe: async (tool, args, key, signal) => {
      const read = await env.call(tool, args, key, signal);
      if (!read.ok) throw Object.assign(new Error(read.error.message), { name: read.error.name });
      return read.output;
    },
    clock: env.options.clock,
    stop: env.stop,
    now: env.at,
    journal: env.journal,
    honoursKeys: env.options.honoursKeys,
    starting: (c) => {
      const running = env.running() + 1;
      env.emit({ type: "step_started", stepId: step.id, goal: step.goal, attempt: c.attempt, tool: c.tool, running });
    },
    // The call goes on: its decision is news now, not when the call ends.
    announce: (decision) => env.emit({ type: "decision", decision }),
  };
}

/** Where the step stands as the call begins. The model may call a step's fallback tool itself: the step then runs on it. */
function snapshotOf(env: CallEnv, step: Step, tool: string, modelArgs: Record<string, unknown>): AttemptSnapshot {
  const { state, options } = env;
  const args = stepArgs(env, step, modelArgs);
  const onFallback = tool !== step.tool;
  const run: StepRun = {
    status: "pending",
    attempts: 0,
    ...state.steps[step.id],
    ...(onFallback ? { usedFallback: true } : {}),
  };
  return {
    step,
    run,
    threadId: env.threadId,
    call: { tool, args: onFallback ? { ...args, ...step.fallback?.args } : args },
    args,
    plan: state.plan!,
    facts: state.facts,
    trusted: factValues(state.facts),
    steps: state.steps,
    falsified: state.planRun.falsified,
    committed: state.sideEffects,
    compensations: state.compensations,
    spent: state.budget?.spent ?? 0,
    maxCost: options.policy.budget.maxCost,
    timeoutMs: step.timeoutMs ?? options.policy.defaultTimeoutMs,
    at: env.at(),
    standing: runStanding(env),
  };
}

/** Where the run stands for the ladder; the driver counts the decisions its call takes on top. */
function runStanding(env: CallEnv): RunStanding {
  const policy = env.options.policy;
  const decisions = env.state.decisions;
  return { policy, replan: standing(env.state, policy), decisionCount: ladderDecisionCount(decisions), decisions };
}

/** The driver's ending as the tool message and the plan state it changes; `asked`: a person's question it raises. */
function replyOf(env: CallEnv, step: Step, done: DoneCommand, asked: InDoubtAsk | undefined): ToolReply {
  const { ending, run, decisions } = done;
  const plan = env.state.plan!;
  const { call } = done;
  const key = done.last?.key;
  const provenance = { producedBy: step.id, planVersion: plan.version, assumptions: step.assumptions ?? [] };
  if (ending.kind === "succeeded") {
    // A committed effect is recorded whatever the assumption checks say next: it happened.
    const sideEffects = key ? [{ stepId: step.id, idempotencyKey: key, at: env.at(), output: ending.output }] : [];
    if (ending.broken) {
      const succeeded = { run, values: ending.values, sideEffects };
      return settle(env, { step, run, decisions, verdict: ending.verdict!, call, deviation: ending.broken, succeeded });
    }
    const facts = makeFacts(ending.values, provenance);
    const own = done.last?.outcome;
    const content = own?.ok && own.text !== undefined ? own.text : (JSON.stringify(ending.output) ?? "null");
    return { content, status: "success", update: { steps: { [step.id]: run }, facts, decisions, sideEffects } };
  }
  if (ending.kind === "reused") throw new Error("a drive with a standing judges a reused output");
  const deviation = ending.deviation;
  return settle(env, { step, run, decisions, verdict: ending.verdict!, call, deviation, ...(asked ? { asked } : {}) });
}

/**
 * The call's charge for `budget.spent`, and a step success for the cooldown (one id per success,
 * so side-by-side calls all count).
 */
function recorded(env: CallEnv, step: Step, result: ToolReply, charged: number): ToolReply {
  const update = { ...result.update };
  const maxCost = env.options.policy.budget.maxCost;
  if (charged > 0) update.budget = { charge: charged, ...(maxCost === undefined ? {} : { maxCost }) };
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
