/** The classifier node: a thin adapter from state to the pure `classify` and back. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { UsageEntry } from "../contracts/usage.js";
import type { Runtime } from "../runtime/options.js";
import type { PlanManagerStateType, PlanManagerUpdate } from "../runtime/state.js";
import type { Decision } from "../plan/schema.js";
import { LADDER_ACTIONS, mayAskLlm, recordAfter } from "../policy/step-records.js";
import { classify, type ReplanStanding, type Verdict } from "../policy/classify.js";
import { emit } from "../runtime/events.js";
import { ESCALATION_OPTIONS, escalationPayload, offered } from "../runtime/interrupts.js";
import { falsify } from "../runtime/falsify.js";

export function replanStanding(state: PlanManagerStateType, rt: Runtime): ReplanStanding {
  const g = state.guards;
  return {
    available: typeof rt.planner.replan === "function",
    count: g.count,
    spent: state.budget.replanSpent,
    coolingDown: Object.entries(g.lastReplanAt)
      .filter(([, at]) => g.successes - at < rt.policy.replanCooldownSteps)
      .map(([a]) => a),
    falsified: g.falsified,
  };
}

export function makeClassifierNode(rt: Runtime) {
  return async function classifier(
    state: PlanManagerStateType,
    config: LangGraphRunnableConfig,
  ): Promise<PlanManagerUpdate> {
    const deviation = state.deviation;
    if (!deviation || !state.plan) return {};
    const step = deviation.stepId ? state.plan.steps.find((s) => s.id === deviation.stepId) : undefined;
    const run = deviation.stepId ? state.steps[deviation.stepId] : undefined;
    const producerAssumptions = [...new Set([...(deviation.missing ?? []), ...(deviation.facts ?? [])])].flatMap(
      (key) => {
        const producer = state.facts[key]?.producedBy ?? state.plan!.steps.find((s) => s.produces?.includes(key))?.id;
        return state.plan!.steps.find((s) => s.id === producer)?.assumptions ?? [];
      },
    );
    let verdict: Verdict = classify({
      deviation,
      ...(step ? { step } : {}),
      ...(run ? { run } : {}),
      policy: rt.policy,
      replan: replanStanding(state, rt),
      // `rate.limit` records are the dispatcher's bookkeeping, not ladder decisions (DESIGN §7.1).
      decisionCount: state.decisions.filter((d) => d.rule !== "rate.limit").length,
      producerAssumptions,
    });
    const usage: UsageEntry[] = [];
    if (rt.classifier && mayAskLlm(verdict)) {
      const answer = await rt.classifier.classify({ deviation, ...(step ? { step } : {}), allowed: LADDER_ACTIONS });
      const at = new Date(rt.clock.now()).toISOString();
      for (const u of answer?.usage ?? []) usage.push({ ...u, purpose: "classify", at });
      if (answer && "failure" in answer) {
        // The rule's verdict stands; its reason says why the LLM classifier could not help.
        verdict = { ...verdict, reason: `${verdict.reason}; the LLM classifier failed: ${answer.failure.message}` };
      } else if (answer && LADDER_ACTIONS.includes(answer.verdict.action)) {
        verdict = { ...verdict, ...answer.verdict, rule: "llm.classifier", evidence: verdict.evidence, by: "llm" };
      }
    }
    const decision: Decision = {
      seq: state.decisions.length + 1,
      ...(deviation.stepId !== undefined ? { stepId: deviation.stepId } : {}),
      attempt: run?.attempts ?? deviation.attempt,
      failureClass: verdict.failureClass,
      action: verdict.action,
      rule: verdict.rule,
      evidence: verdict.evidence,
      reason: verdict.reason,
      planVersion: state.plan.version,
      at: new Date(rt.clock.now()).toISOString(),
      ...(verdict.delayMs !== undefined ? { delayMs: verdict.delayMs } : {}),
      ...(verdict.brokenAssumption !== undefined ? { brokenAssumption: verdict.brokenAssumption } : {}),
      ...(verdict.by !== undefined ? { by: verdict.by } : {}),
    };
    emit(config, { type: "decision", decision });
    const update: PlanManagerUpdate = { decisions: decision, usage };
    // The evidence stands even when a guardrail stops the replan: record it now (the replanner does it otherwise).
    if (
      verdict.action !== "replan_local" &&
      verdict.action !== "replan_global" &&
      verdict.brokenAssumption !== undefined
    ) {
      const { falsified, labels } = falsify(state, decision);
      if (falsified.length > state.guards.falsified.length) {
        update.guards = { ...state.guards, falsified };
        update.facts = labels.facts;
      }
    }
    const id = deviation.stepId;
    const record = id && run ? recordAfter(verdict.action, run, verdict.delayMs) : undefined;
    if (id && record) update.steps = { [id]: record };
    switch (verdict.action) {
      case "escalate":
        update.status = "awaiting_human";
        update.pendingHuman = escalationPayload(
          state,
          decision,
          offered(ESCALATION_OPTIONS, typeof rt.planner.replan === "function"),
        );
        break;
      case "abort":
        update.status = "aborted";
        update.outcome = {
          summary: "",
          ...(id ? { failedStep: id } : {}),
          failureReason: verdict.failureClass,
          message: verdict.reason,
          recoverable: false,
        };
        break;
      default:
        break;
    }
    return update;
  };
}
