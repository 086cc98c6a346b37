/** The classifier node: a thin adapter from state to the pure `classify` and back. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { UsageEntry } from "../contracts/usage.js";
import { endCompensations } from "./shared/compensate-next.js";
import type { Runtime } from "../runtime/options.js";
import type { PlanManagerStateType, PlanManagerUpdate } from "../runtime/state.js";
import type { Step } from "../plan/schema/step.js";
import type { Decision } from "../policy/ladder/decision.js";
import { producerAssumptions, type Deviation } from "../policy/ladder/deviation.js";
import { LADDER_ACTIONS, mayAskLlm, recordAfter } from "../policy/ladder/records.js";
import { classifierVerdict, classify, retriedOnUnmet, type Verdict } from "../policy/ladder/classify.js";
import { isConcurrencyRecord } from "../policy/attempt/may-start.js";
import { replanStanding } from "../policy/attempt/attempt.js";
import { decide } from "../policy/ladder/decide.js";
import { emit } from "../runtime/events.js";
import { ESCALATION_OPTIONS, IN_DOUBT_OPTIONS, escalationPayload, offered } from "../runtime/interrupts.js";
import { falsify } from "./shared/falsify.js";
import { refreshWrites, staleAnswer } from "../policy/ladder/stale.js";
import { withDeadline } from "../runtime/deadline.js";
import { capText } from "../plan/json-safe.js";
import type { FallbackAnswer } from "../contracts/classifier.js";
import { modelTrace, type ModelTrace } from "../contracts/trace.js";

export function makeClassifierNode(rt: Runtime) {
  return async function classifier(
    state: PlanManagerStateType,
    config: LangGraphRunnableConfig,
  ): Promise<PlanManagerUpdate> {
    const deviation = state.deviation;
    if (!deviation || !state.plan) return {};
    const step = deviation.stepId ? state.plan.steps.find((s) => s.id === deviation.stepId) : undefined;
    const run = deviation.stepId ? state.steps[deviation.stepId] : undefined;
    const backtracks = state.guards.backtracks ?? {};
    const stale =
      deviation.kind === "stale_evidence" ? staleAnswer(deviation, state.plan, backtracks, rt.policy) : undefined;
    const ruled = classify({
      deviation,
      ...(step ? { step } : {}),
      ...(run ? { run } : {}),
      policy: rt.policy,
      replan: replanStanding({ ...state.guards, available: rt.canReplan, spent: state.budget.replanSpent }, rt.policy),
      // The dispatcher's bookkeeping is not a ladder decision (docs/architecture.md "Parallel steps").
      decisionCount: state.decisions.filter((d) => !isConcurrencyRecord(d)).length,
      producerAssumptions: producerAssumptions(state.plan!, state.facts, deviation),
      tiers: rt.tiers,
      ...(stale ? { stale } : {}),
      ...(step ? { unmetRetried: retriedOnUnmet(state.decisions, step.id, state.plan.version) } : {}),
    });
    const usage: UsageEntry[] = [];
    // Built only when the LLM classifier is asked: most failures never reach it.
    const trace = () =>
      modelTrace(config, "classifier", {
        purpose: "classify",
        ...(deviation.stepId !== undefined ? { stepId: deviation.stepId } : {}),
        attempt: run?.attempts ?? deviation.attempt,
        planVersion: state.plan!.version,
      });
    const verdict = await askLlmClassifier(rt, ruled, { deviation, step, usage, runSignal: config.signal, trace });
    const decision = decide(verdict.rule, {
      ...verdict,
      after: state.decisions.length,
      stepId: deviation.stepId,
      attempt: run?.attempts ?? deviation.attempt,
      planVersion: state.plan.version,
      at: new Date(rt.clock.now()).toISOString(),
    });
    emit(config, { type: "decision", decision });
    const update: PlanManagerUpdate = { decisions: decision, usage, ...recordEvidence(state, decision) };
    const id = deviation.stepId;
    const record = id && run ? recordAfter(verdict.action, run, verdict.delayMs) : undefined;
    if (id && record) update.steps = { [id]: verdict.tier ? { ...record, tier: verdict.tier } : record };
    if (verdict.action === "refresh" && deviation.kind === "stale_evidence" && stale) {
      const writes = refreshWrites(deviation, stale.producers, state.steps, state.facts, backtracks);
      update.steps = { ...writes.steps, ...update.steps };
      update.facts = writes.facts;
      update.guards = { ...state.guards, backtracks: writes.backtracks };
    }
    return { ...update, ...afterDecision(rt, state, decision, config) };
  };
}

interface LlmQuestion {
  deviation: Deviation;
  step: Step | undefined;
  usage: UsageEntry[];
  runSignal: AbortSignal | undefined;
  trace: () => ModelTrace;
}

/**
 * The optional LLM classifier, for `unknown` only; a failure of it — an answer saying so, a throw,
 * no answer within `policy.plannerTimeoutMs` — leaves the rule's verdict standing.
 */
async function askLlmClassifier(rt: Runtime, verdict: Verdict, q: LlmQuestion): Promise<Verdict> {
  const { deviation, step, usage } = q;
  const classifier = rt.classifier;
  if (!classifier || !mayAskLlm(verdict)) return verdict;
  const ask = (signal: AbortSignal) =>
    classifier.classify({ deviation, ...(step ? { step } : {}), allowed: LADDER_ACTIONS, signal }, q.trace());
  let answer: FallbackAnswer | undefined;
  try {
    answer = await withDeadline(rt.policy.plannerTimeoutMs, "classifier.classify", ask, q.runSignal);
  } catch (error) {
    answer = { failure: { message: capText(error instanceof Error ? error.message : String(error)) } };
  }
  const at = new Date(rt.clock.now()).toISOString();
  for (const u of answer?.usage ?? []) usage.push({ ...u, purpose: "classify", at });
  return classifierVerdict(verdict, answer);
}

/** The evidence stands even when a guardrail stops the replan: record it now (the replanner does it otherwise). */
function recordEvidence(state: PlanManagerStateType, decision: Decision): PlanManagerUpdate {
  const replanning = decision.action === "replan_local" || decision.action === "replan_global";
  if (replanning || decision.brokenAssumption === undefined) return {};
  const { falsified, labels } = falsify(state, decision);
  if (falsified.length <= state.guards.falsified.length) return {};
  return { guards: { ...state.guards, falsified }, facts: labels.facts };
}

/** Escalations wait for a person; an abort ends the run with the reason in `outcome`. */
function afterDecision(
  rt: Runtime,
  state: PlanManagerStateType,
  decision: Decision,
  config: LangGraphRunnableConfig,
): PlanManagerUpdate {
  if (decision.action === "escalate") {
    const inDoubt = state.deviation?.kind === "effect_in_doubt";
    const options = inDoubt ? IN_DOUBT_OPTIONS : offered(ESCALATION_OPTIONS, rt.canReplan);
    return { status: "awaiting_human", pendingHuman: escalationPayload(state, decision, options) };
  }
  if (decision.action !== "abort") return {};
  const failedStep = decision.stepId !== undefined ? { failedStep: decision.stepId } : {};
  const outcome = { summary: "", ...failedStep, failureReason: decision.failureClass, message: decision.reason };
  const undo = endCompensations(rt, state, config, "aborted", decision.at);
  return { status: "aborted", outcome: { ...outcome, recoverable: false }, ...undo };
}
