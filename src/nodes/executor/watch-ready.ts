/**
 * Assumption watchers, called before the steps that rest on their assumptions start
 * (docs/decisions/0041-evidence-freshness-and-drift.md): what is due is the policy's (`policy/trust/watch.ts`);
 * here the read-only tools are called, each call recorded in state `watches`. A watcher whose check is false
 * queues the drift for the ladder; one that throws or times out (`watchTimeoutMs`), or whose check cannot be
 * evaluated, is recorded with its evidence rule and falsifies nothing: the step starts on the assumption as it stood.
 * A record keeps the watcher's output only as evidence (a false or unreadable check). No further watcher is called
 * once the run's driver wants a stop or pause (runtime/run-control.ts).
 */
import type { Step } from "../../plan/schema/step.js";
import type { WatchRecord } from "../../plan/schema/run.js";
import { selectReady } from "../../plan/ready.js";
import { toJsonSafe, wasCut } from "../../plan/json-safe.js";
import { errorInfo } from "../../policy/ladder/deviation.js";
import { classifyEvidence } from "../../policy/ladder/evidence-rules.js";
import {
  driftDeviation,
  dueWatches,
  judgeWatch,
  lastWatched,
  lastWatchFailed,
  watchedAssumptions,
  watchCallFailed,
  watchTimeoutMs,
  unreadableVerdict,
  watchUnreadable,
  WATCH_UNREADABLE,
  type WatchedAssumption,
} from "../../policy/trust/watch.js";
import { decide } from "../../policy/ladder/decide.js";
import { callTool, StepTimeout } from "../../runtime/call-tool.js";
import { runControlOf } from "../../runtime/run-control.js";
import type { Visit } from "./visit.js";

/** The watchers due for the steps ready now, called one after another; stops at the first drift, or a stop wanted. */
export async function watchReadySteps(v: Visit): Promise<void> {
  const watched = watchedAssumptions(v.plan);
  if (watched.size === 0 || v.holdReason() !== undefined) return;
  const readiness = selectReady(v.plan, v.steps, v.trusted);
  if (readiness.kind !== "ready") return;
  const control = runControlOf(v.config);
  for (const step of readiness.steps) {
    const due = dueFor(v, step, watched);
    for (const a of due) {
      if (control?.wanted()) return;
      v.watched.add(a.id);
      if (await drifted(v, step, a)) return;
    }
  }
}

/** Whether `step` must wait for a watcher this visit has not called (a step made ready after the visit's watches). */
export function awaitsWatch(v: Visit, step: Step): boolean {
  if (!step.assumptions?.length) return false;
  const watched = watchedAssumptions(v.plan);
  if (watched.size === 0) return false;
  return dueFor(v, step, watched).length > 0;
}

/**
 * When each assumption was last watched, and which last calls failed, read from the records once per visit and
 * kept up to date by its calls.
 */
type LastCalls = { at: Map<string, number>; failed: Set<string> };
const lastCalls = new WeakMap<Visit, LastCalls>();
function lastOf(v: Visit): LastCalls {
  let last = lastCalls.get(v);
  if (!last) {
    const records = [...v.state.watches, ...v.watches];
    lastCalls.set(v, (last = { at: lastWatched(records), failed: lastWatchFailed(records) }));
  }
  return last;
}

function dueFor(v: Visit, step: Step, watched: ReadonlyMap<string, WatchedAssumption>): WatchedAssumption[] {
  const last = lastOf(v);
  const falsified = v.state.guards.falsified;
  return dueWatches(step, watched, falsified, last.at, v.watched, v.rt.clock.now(), last.failed);
}

/**
 * A check that could not read its watcher's answer leaves the step unwatched: a decision says so, the first of a
 * run of such answers for the assumption (docs/decisions/0041-evidence-freshness-and-drift.md).
 */
function unreadable(v: Visit, step: Step, a: WatchedAssumption, problem: string): void {
  const previous =
    v.watches.findLast((r) => r.assumptionId === a.id) ?? v.state.watches.findLast((r) => r.assumptionId === a.id);
  if (watchUnreadable(previous)) return;
  const verdict = unreadableVerdict(problem);
  const decision = decide(verdict.rule, {
    after: v.state.decisions.length + v.decisions.length,
    stepId: step.id,
    attempt: 0,
    failureClass: verdict.failureClass,
    reason: verdict.reason,
    planVersion: v.plan.version,
    at: v.now(),
  });
  v.decisions.push(decision);
  v.send({ type: "decision", decision });
}

async function drifted(v: Visit, step: Step, a: WatchedAssumption): Promise<boolean> {
  const base = { assumptionId: a.id, stepId: step.id, tool: a.watch.tool, at: v.now(), planVersion: v.plan.version };
  const tool = v.rt.tools.get(a.watch.tool);
  let record: WatchRecord;
  let output: unknown;
  try {
    if (!tool) throw new Error(`watch tool "${a.watch.tool}" is not in the registry`);
    const call = {
      tool,
      args: { ...a.watch.args },
      timeoutMs: watchTimeoutMs(a.watch, v.rt.policy.defaultTimeoutMs),
      configurable: { stepId: step.id, planVersion: v.plan.version, attempt: 0 },
    };
    output = toJsonSafe(await callTool(call, v.config, v.config.signal));
    const judged = judgeWatch(a, output, v.trusted, wasCut(output));
    // A check that held needs no evidence: 1,000 steps would otherwise carry 1,000 outputs in state.
    record =
      "held" in judged
        ? { ...base, ...(judged.held ? {} : { output }), held: judged.held }
        : { ...base, output, error: { name: WATCH_UNREADABLE, message: judged.unreadable } };
    if (!("held" in judged)) unreadable(v, step, a, judged.unreadable);
  } catch (thrown) {
    const error = errorInfo(thrown);
    // Classed as a tool call's failure is: a timeout as a timeout (docs/decisions/0041-evidence-freshness-and-drift.md).
    const kind = thrown instanceof StepTimeout ? "timeout" : "error";
    const evidence = classifyEvidence({ kind, message: error.message, error, attempt: 0 }).id;
    record = { ...base, error, evidence };
  }
  v.watches.push(record);
  const last = lastOf(v);
  last.at.set(a.id, Date.parse(record.at));
  if (watchCallFailed(record)) last.failed.add(a.id);
  else last.failed.delete(a.id);
  if (record.held !== false) return false;
  v.dispatch.queue.push(driftDeviation(a, step.id, output));
  return true;
}
