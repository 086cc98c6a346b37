/**
 * Running compensations (docs/decisions/0039-compensation.md): the executor runs the
 * pending ones a replan left before it starts any step, finalize those of a run that ends aborted (or
 * failed, with `policy.compensateOn`). Each runs under its own key (`<effect key>:compensate`) through
 * the effect journal like any side-effecting call (docs/decisions/0038-effect-journal.md), is retried
 * per its step's retry policy, and one that still fails, or whose outcome is unknown, is asked about,
 * never dropped.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../../runtime/options.js";
import type { PendingHuman, PlanManagerStateType, PlanManagerUpdate } from "../../runtime/state.js";
import type { CompensationRecord, ErrorInfo } from "../../plan/schema/run.js";
import type { ResumeAction } from "../../plan/schema/interrupts.js";
import type { Decision } from "../../policy/ladder/decision.js";
import { backoffDelay, effectiveRetry } from "../../plan/retry.js";
import { errorInfo } from "../../policy/ladder/deviation.js";
import {
  abandonedAtEnd,
  compensatesOn,
  compensationRecords,
  type Abandoned,
  type EffectsSnapshot,
} from "../../policy/compensation/abandoned.js";
import { compensationDecision, type DecisionPlace } from "../../policy/compensation/verdict.js";
import { settledVerdict } from "../../policy/ladder/in-doubt.js";
import { decide } from "../../policy/ladder/decide.js";
import type { SettledDoubt } from "../../runtime/journaled-call.js";
import { callTool } from "../../runtime/call-tool.js";
import { dispatcherOf, type Flight } from "../../runtime/dispatch.js";
import { journalOf } from "../../runtime/effect-journal.js";
import { journaledInvoke } from "../executor/journaled-call.js";
import { emit } from "../../runtime/events.js";
import { escalationPayload } from "../../runtime/interrupts.js";

/** What the run committed and compensated, for the pure checks (policy/compensation/). */
export function effectsOf(state: PlanManagerStateType, config: LangGraphRunnableConfig): EffectsSnapshot | undefined {
  if (state.sideEffects.length === 0) return undefined;
  return {
    threadId: String(config.configurable?.thread_id ?? "no-thread"),
    committed: state.sideEffects,
    compensations: state.compensations ?? [],
    facts: state.facts,
  };
}

/** Whether a compensation waits to run (routing reads it: the executor runs it before any step). */
export function compensationPending(state: { compensations?: readonly CompensationRecord[] | undefined }): boolean {
  return (state.compensations ?? []).some((c) => c.status === "pending");
}

/**
 * Runs one compensation until it is done or its retry policy runs out. A run its caller stopped
 * leaves the record pending when the call failed or its backoff was cut (`stopped`): the resumed run
 * goes through the journal again. A call that succeeds after the stop is kept, like a step's. A call
 * whose outcome is unknown (cut by its deadline, a reset connection, a killed process) is not tried
 * again: its record is `failed` and `inDoubt` until a person answers; a person's `retry`
 * (`approvedKey`) lets exactly one more call go out under the key. The journal numbers the undo's calls
 * on from the call the person approved (`approvedAttempt`), though a round counts its `attempts` from 1:
 * the approved call, cut too (the process killed in it), is then told from the one asked about.
 */
export async function runCompensation(
  rt: Runtime,
  config: LangGraphRunnableConfig,
  record: CompensationRecord,
  planVersion: number,
  settled: SettledDoubt[] = [],
): Promise<CompensationRecord | "stopped"> {
  const policy = effectiveRetry(record.retry ? { retry: record.retry } : undefined, rt.policy);
  const tool = record.tool === undefined ? undefined : rt.tools.get(record.tool);
  const stop = dispatcherOf(config).stopSignal;
  const now = () => new Date(rt.clock.now()).toISOString();
  const { error: _error, inDoubt: _inDoubt, approvedKey, approvedAttempt = 0, ...rest } = record;
  // Kept while the undo may be called again, so a later approval numbers on from it.
  const numbered = approvedAttempt > 0 ? { approvedAttempt } : {};
  let attempts = record.attempts ?? 0;
  let error: ErrorInfo = { name: "PermanentError", message: `tool "${record.tool}" is not in the registry` };
  const tries = tool ? policy.maxAttempts : 0;
  for (let tried = 0; tried < tries; tried++) {
    if (tried > 0) {
      const delay = backoffDelay(policy, tried, error.retryAfterMs);
      // A stop ends the backoff (the sleep rejects): nothing more is called in this run.
      const slept = await rt.clock.sleep(delay, stop).then(
        () => true,
        () => false,
      );
      if (!slept || stop?.aborted) return "stopped";
    }
    attempts++;
    const configurable = {
      stepId: record.stepId,
      planVersion,
      attempt: attempts,
      idempotencyKey: record.compensationKey,
    };
    const seen: Pick<Flight, "effect" | "settled"> = {};
    // The approval covers the intent it was given for, numbered up to `approvedAttempt`, not this call's own.
    const invoke = undoInvoke(rt, config, record, approvedAttempt + attempts, approvedKey, seen);
    try {
      const timeoutMs = rt.policy.defaultTimeoutMs;
      // A keyed call is not cut by a stop: its result is kept (docs/decisions/0028-a-stopped-run-keeps-its-results.md).
      await invoke({ tool: tool!, args: { ...record.args }, timeoutMs, configurable }, config).finally(() =>
        settled.push(...(seen.settled ?? [])),
      );
      return { ...rest, status: "done", attempts, at: now() };
    } catch (thrown) {
      error = errorInfo(thrown);
      if (seen.effect === "in_doubt")
        return { ...rest, ...numbered, status: "failed", attempts, error, inDoubt: true, at: now() };
      if (stop?.aborted) return "stopped";
    }
  }
  return { ...rest, ...numbered, status: "failed", attempts, error, at: now() };
}

/** The undo's call: through the run's effect journal under the compensation's key, when the run has one. */
function undoInvoke(
  rt: Runtime,
  config: LangGraphRunnableConfig,
  record: CompensationRecord,
  attempt: number,
  approvedKey: string | undefined,
  seen: Pick<Flight, "effect" | "settled">,
): typeof callTool {
  const journal = journalOf(config);
  if (!journal) return callTool;
  const call = {
    rt,
    journal,
    threadId: String(config.configurable?.thread_id ?? "no-thread"),
    key: record.compensationKey,
    // The step's own declarations are about its tool, not its undo: only effects.honoursKeys counts.
    step: { id: record.stepId },
    undo: true,
    tool: record.tool!,
    attempt,
    trusted: {},
    approvedKey,
    approvalByAttempt: true,
    now: () => new Date(rt.clock.now()).toISOString(),
  };
  return journaledInvoke(call, seen);
}

/** The options of a failed compensation's question: run it again, leave it undone, or (mid-run) abort. */
const FAILED_OPTIONS: readonly ResumeAction[] = ["retry", "skip", "abort"];
/** An undo whose outcome is unknown may also have happened: a person who sees it did says so. */
const IN_DOUBT_OPTIONS: readonly ResumeAction[] = ["happened", ...FAILED_OPTIONS];

/**
 * Runs the first pending compensation; the update writes its record and decision, and asks a person
 * when it failed. `endStatus`: the run was ending (finalize), and ends so once nothing is pending.
 */
export async function compensateNext(
  rt: Runtime,
  state: PlanManagerStateType,
  config: LangGraphRunnableConfig,
  endStatus?: "aborted" | "failed",
): Promise<PlanManagerUpdate | undefined> {
  const records = state.compensations ?? [];
  const index = records.findIndex((c) => c.status === "pending");
  if (index < 0) return undefined;
  const planVersion = state.plan?.version ?? 0;
  const settled: SettledDoubt[] = [];
  const ended = await runCompensation(rt, config, records[index]!, planVersion, settled);
  // Stopped: nothing is written, and the run ends at the next node's start.
  if (ended === "stopped") return {};
  const compensations = records.map((c, i) => (i === index ? ended : c));
  // An undo in doubt the journal settled (called again under a key its tool honours) is a decision too.
  const decisions = settled.map((s, i) =>
    settledDecision(s, ended, { after: state.decisions.length + i, planVersion, at: ended.at }),
  );
  const decision = compensationDecision(ended, {
    after: state.decisions.length + decisions.length,
    planVersion,
    at: ended.at,
  });
  decisions.push(decision);
  for (const d of decisions) emit(config, { type: "decision", decision: d });
  if (ended.status === "done") return { compensations, decisions };
  const pendingHuman = failedQuestion(
    { ...state, decisions: [...state.decisions, ...decisions.slice(0, -1)] },
    decision,
    ended,
    endStatus,
  );
  return { compensations, decisions, status: "awaiting_human", pendingHuman, deviation: null };
}

function settledDecision(s: SettledDoubt, record: CompensationRecord, place: DecisionPlace): Decision {
  const verdict = settledVerdict(s.how, record.tool ?? "compensation", s.key);
  return decide(verdict.rule, {
    ...place,
    stepId: record.stepId,
    attempt: record.attempts ?? 0,
    failureClass: verdict.failureClass,
    reason: verdict.reason,
  });
}

function failedQuestion(
  state: PlanManagerStateType,
  decision: Decision,
  ended: CompensationRecord,
  endStatus: "aborted" | "failed" | undefined,
): PendingHuman {
  const offered = ended.inDoubt ? IN_DOUBT_OPTIONS : FAILED_OPTIONS;
  const options = endStatus ? offered.filter((o) => o !== "abort") : [...offered];
  // The step may have left the plan: the question is about the effect, not the step's attempts.
  const payload = escalationPayload({ ...state, decisions: [...state.decisions, decision] }, decision, options);
  const { stepId, idempotencyKey, compensationKey, tool, error, inDoubt } = ended;
  const failed = {
    stepId,
    idempotencyKey,
    compensationKey,
    ...(tool ? { tool } : {}),
    ...(error ? { error } : {}),
    ...(inDoubt ? { inDoubt } : {}),
  };
  if (payload.kind !== "escalation") return payload;
  return { ...payload, context: { ...payload.context, compensation: { failed, ...(endStatus ? { endStatus } : {}) } } };
}

/** The question before a version that abandons effects nothing undoes commits: keep them (approve) or abort. */
export function keepEffectsQuestion(
  state: PlanManagerStateType,
  decision: Decision,
  missing: readonly Abandoned[],
): PendingHuman {
  const payload = escalationPayload({ ...state, decisions: [...state.decisions, decision] }, decision, [
    "approve",
    "abort",
  ]);
  if (payload.kind !== "escalation") return payload;
  const list = missing.map((m) => ({ stepId: m.step.id, idempotencyKey: m.effect.idempotencyKey }));
  return { ...payload, context: { ...payload.context, compensation: { missing: list } } };
}

/**
 * The compensations a run ending with `status` adds (`policy.compensateOn`): one pending record per
 * committed effect of the last version whose step has `compensate`, latest commit first. Written
 * with the status, so routing (a pure function of state) sends the run through the executor first.
 */
export function endCompensations(
  rt: Runtime,
  state: PlanManagerStateType,
  config: LangGraphRunnableConfig,
  status: "aborted" | "failed",
  at: string,
): { compensations?: CompensationRecord[] } {
  const effects = effectsOf(state, config);
  if (!effects || !state.plan || !compensatesOn(status, rt.policy.compensateOn)) return {};
  const undoable = abandonedAtEnd(state.plan, effects).filter((a) => a.step.compensate !== undefined);
  if (undoable.length === 0) return {};
  return { compensations: [...effects.compensations, ...compensationRecords(undoable, state.facts, at)] };
}
