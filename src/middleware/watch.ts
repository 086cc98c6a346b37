/**
 * Assumption watchers inside createAgent (docs/decisions/0041-evidence-freshness-and-drift.md,
 * docs/decisions/0053-middleware-quality-freshness-watch.md): before a plan step's call, the watchers
 * due for the assumptions it rests on (`policy/trust/watch.ts` says which) are called, read-only and
 * without a key, through the rest of the middleware chain, each call recorded in state `watches`. A
 * check that is false is the graph's drift (`assumption.drift`: the model is asked for a revision);
 * a watcher that throws, times out or cannot be read falsifies nothing, and the step's call goes on.
 */
import { factValues } from "../plan/facts.js";
import { toJsonSafe, wasCut } from "../plan/json-safe.js";
import type { StepRun, WatchRecord } from "../plan/schema/run.js";
import type { Step } from "../plan/schema/step.js";
import { ladderDecisionCount, ladderVerdict } from "../policy/attempt/attempt.js";
import type { Decision } from "../policy/ladder/decision.js";
import { classifyEvidence } from "../policy/ladder/evidence-rules.js";
import {
  driftDeviation,
  dueWatches,
  judgeWatch,
  lastWatched,
  lastWatchFailed,
  unreadableVerdict,
  watchedAssumptions,
  watchTimeoutMs,
  watchUnreadable,
  WATCH_UNREADABLE,
  type WatchedAssumption,
} from "../policy/trust/watch.js";
import { decisionAt } from "./decisions.js";
import { settle, standing, type CallEnv, type ToolReply } from "./settle.js";

export interface Watched {
  /** The watchers' calls, for state `watches`. */
  records: WatchRecord[];
  /** `assumption.watch-unreadable` decisions. */
  decisions: Decision[];
  /** An assumption drifted: the result the step's call gets instead of running. */
  drifted?: ToolReply;
}

/** Calls the watchers due before `step` starts, one after another; stops at the first drift. */
export async function watchBefore(
  env: CallEnv,
  step: Step,
  call: { tool: string; args: Record<string, unknown> },
): Promise<Watched> {
  const out: Watched = { records: [], decisions: [] };
  const plan = env.state.plan!;
  const watched = watchedAssumptions(plan);
  if (watched.size === 0 || !step.assumptions?.length) return out;
  const records = env.state.watches ?? [];
  const now = env.options.now();
  const due = dueWatches(
    step,
    watched,
    env.state.planRun.falsified,
    lastWatched(records),
    new Set(),
    now,
    lastWatchFailed(records),
  );
  for (const a of due) {
    const { record, output } = await callWatcher(env, step, a);
    out.records.push(record);
    if (record.error?.name === WATCH_UNREADABLE && !watchUnreadable(records.findLast((r) => r.assumptionId === a.id)))
      out.decisions.push(unreadableDecision(env, step, record.error.message));
    if (record.held !== false) continue;
    out.drifted = drift(env, step, call, a, output, out.decisions);
    break;
  }
  return out;
}

/** One watcher's call and what its check says, as the graph records it. */
async function callWatcher(
  env: CallEnv,
  step: Step,
  a: WatchedAssumption,
): Promise<{ record: WatchRecord; output: unknown }> {
  const plan = env.state.plan!;
  const base = { assumptionId: a.id, stepId: step.id, tool: a.watch.tool, at: env.at(), planVersion: plan.version };
  const timeoutMs = watchTimeoutMs(a.watch, env.options.policy.defaultTimeoutMs);
  const result = await env.invoke(a.watch.tool, { ...a.watch.args }, undefined, timeoutMs);
  if (!result.ok) {
    const { error } = result;
    // Classed as a tool call's failure is: a timeout as a timeout.
    const kind = result.timeout ? "timeout" : "error";
    const evidence = classifyEvidence({ kind, message: error.message, error, attempt: 0 }).id;
    return { record: { ...base, error, evidence }, output: undefined };
  }
  const output = toJsonSafe(result.output);
  const judged = judgeWatch(a, output, factValues(env.state.facts), wasCut(output));
  // A check that held needs no evidence: a long run would otherwise carry every output in state.
  const record: WatchRecord =
    "held" in judged
      ? { ...base, ...(judged.held ? {} : { output }), held: judged.held }
      : { ...base, output, error: { name: WATCH_UNREADABLE, message: judged.unreadable } };
  return { record, output };
}

function unreadableDecision(env: CallEnv, step: Step, problem: string): Decision {
  const verdict = unreadableVerdict(problem);
  const place = { stepId: step.id, attempt: 0, planVersion: env.state.plan!.version, at: env.at() };
  return decisionAt(verdict, place);
}

/** The drifted assumption, answered by the ladder as the graph answers it: a revision naming it, as a rule. */
function drift(
  env: CallEnv,
  step: Step,
  call: { tool: string; args: Record<string, unknown> },
  a: WatchedAssumption,
  output: unknown,
  decisions: Decision[],
): ToolReply {
  const { state, options } = env;
  const deviation = driftDeviation(a, step.id, output);
  const run: StepRun = state.steps[step.id] ?? { status: "pending", attempts: 0 };
  const decisionCount = ladderDecisionCount(state.decisions) + ladderDecisionCount(decisions);
  const standingNow = { policy: options.policy, replan: standing(state, options.policy), decisionCount };
  const verdict = ladderVerdict(step, run, state.plan!, state.facts, deviation, standingNow);
  const place = { stepId: step.id, attempt: run.attempts, planVersion: state.plan!.version, at: env.at() };
  const settled = settle(env, {
    step,
    run,
    decisions: [...decisions, decisionAt(verdict, place)],
    verdict,
    call,
    deviation,
  });
  // The step did not start: it keeps the record it had (none before its first call).
  const { steps: _written, ...update } = settled.update;
  return { ...settled, content: `Not run: ${settled.content}`, update };
}
