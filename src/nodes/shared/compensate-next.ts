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
import type { CompensationRecord } from "../../plan/schema/run.js";
import type { Decision } from "../../policy/ladder/decision.js";
import { errorInfo } from "../../policy/ladder/deviation.js";
import {
  abandonedAtEnd,
  compensatesOn,
  compensationRecords,
  type Abandoned,
  type EffectsSnapshot,
} from "../../policy/compensation/abandoned.js";
import { undoOptions } from "../../policy/compensation/undo-round.js";
import { cutByTheTool } from "../../policy/ladder/in-doubt.js";
import { callTool, StepTimeout } from "../../runtime/call-tool.js";
import { dispatcherOf } from "../../runtime/dispatch.js";
import { journalOf } from "../../runtime/effect-journal.js";
import { undoNext, type UndoPort } from "../../runtime/undo.js";
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
 * The graph's port of the one undo runner (runtime/undo.ts): the undo's tool from the registry,
 * called with `callTool` under the run's config; backoffs on the run's clock, cut by its stop signal.
 */
function undoPort(rt: Runtime, config: LangGraphRunnableConfig, planVersion: number): UndoPort {
  const stop = dispatcherOf(config).stopSignal;
  return {
    journal: journalOf(config),
    threadId: String(config.configurable?.thread_id ?? "no-thread"),
    honoursKeys: rt.honoursKeys,
    policy: rt.policy,
    has: (tool) => rt.tools.has(tool),
    call: async (c) => {
      const configurable = { stepId: c.stepId, planVersion, attempt: c.attempt, idempotencyKey: c.key };
      try {
        return {
          ok: true,
          output: await callTool(
            { tool: rt.tools.get(c.tool)!, args: c.args, timeoutMs: c.timeoutMs, configurable },
            config,
          ),
        };
      } catch (thrown) {
        const error = errorInfo(thrown);
        return { ok: false, error, cut: thrown instanceof StepTimeout || cutByTheTool(error), thrown };
      }
    },
    clock: rt.clock,
    stop,
    now: () => new Date(rt.clock.now()).toISOString(),
  };
}

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
  const planVersion = state.plan?.version ?? 0;
  const ran = await undoNext(undoPort(rt, config, planVersion), records, {
    planVersion,
    after: state.decisions.length,
  });
  if (ran === undefined) return undefined;
  // Stopped: nothing is written, and the run ends at the next node's start.
  if (ran === "stopped") return {};
  const { record: ended, decisions } = ran;
  const compensations = records.map((c, i) => (i === ran.index ? ended : c));
  const decision = decisions.at(-1)!;
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

function failedQuestion(
  state: PlanManagerStateType,
  decision: Decision,
  ended: CompensationRecord,
  endStatus: "aborted" | "failed" | undefined,
): PendingHuman {
  const options = undoOptions(ended, endStatus !== undefined);
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
