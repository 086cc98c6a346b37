/**
 * Evidence freshness inside createAgent (docs/decisions/0041-evidence-freshness-and-drift.md,
 * docs/decisions/0053-middleware-quality-freshness-watch.md): before a plan step's call, the policy's
 * own check (`beforeAttempt`, given the clock) finds the inputs older than the step's `freshFor`.
 * The ladder answers as in the graph: the producers run again first (`evidence.stale`, a bounded
 * backtrack) — here the model is told to call them, and the step waits until they have — or, when a
 * producer has side effects or is no step of the plan, a person is asked (`evidence.stale-escalate`).
 */
import { factValues } from "../plan/facts.js";
import type { ErrorInfo, StepRun } from "../plan/schema/run.js";
import type { Step } from "../plan/schema/step.js";
import { beforeAttempt, ladderDecisionCount } from "../policy/attempt/attempt.js";
import { awaitsRefresh } from "../policy/attempt/freshness.js";
import { classify } from "../policy/ladder/classify.js";
import type { DeviationOf } from "../policy/ladder/deviation.js";
import { refreshWrites, staleAnswer } from "../policy/ladder/stale.js";
import { decisionAt } from "./decisions.js";
import { refusedCall } from "../policy/ladder/refused-call.js";
import { holdCall, settle, standing, type CallEnv, type ToolReply } from "./settle.js";
import { refusalKey } from "./agent-state.js";

type Call = { tool: string; args: Record<string, unknown> };

/** The step's call may not start on the inputs it has now: why, and what the ladder wrote; undefined when it may. */
export function freshnessBefore(env: CallEnv, step: Step, call: Call): ToolReply | undefined {
  const { state } = env;
  const plan = state.plan!;
  const run = state.steps[step.id];
  // A person who allowed the step another round at an escalation has seen how old its inputs are.
  if (run?.status === "pending" && run.retryBase !== undefined) return undefined;
  const inPlan = (id: string) => plan.steps.some((s) => s.id === id);
  if (awaitsRefresh(step, (k) => state.facts[k], state.steps, inPlan)) return waiting(env, step, call);
  const before = beforeAttempt({
    step,
    run,
    threadId: env.threadId,
    tool: call.tool,
    args: call.args,
    facts: state.facts,
    trusted: factValues(state.facts),
    spent: 0,
    charge: 0,
    maxCost: undefined,
    committed: [],
    steps: state.steps,
    now: env.options.now(),
  });
  if (before.kind !== "refused" || before.failure.deviation.kind !== "stale_evidence") return undefined;
  const deviation = { ...before.failure.deviation, stepId: step.id, attempt: run?.attempts ?? 0 };
  return stale(env, step, call, deviation as DeviationOf<"stale_evidence">, before.failure.error);
}

function stale(
  env: CallEnv,
  step: Step,
  call: Call,
  deviation: DeviationOf<"stale_evidence">,
  error: ErrorInfo,
): ToolReply {
  const { state, options } = env;
  const plan = state.plan!;
  const backtracks = state.planRun.backtracks ?? {};
  const answer = staleAnswer(deviation, plan, backtracks, options.policy);
  const run: StepRun = state.steps[step.id] ?? { status: "pending", attempts: 0 };
  const verdict = classify({
    deviation,
    step,
    run,
    policy: options.policy,
    replan: standing(state, options.policy),
    decisionCount: ladderDecisionCount(state.decisions),
    stale: { rule: answer.rule, reason: answer.reason },
  });
  const place = { stepId: step.id, attempt: run.attempts, planVersion: plan.version, at: env.at() };
  const decision = decisionAt(verdict, place);
  if (verdict.action === "refresh") {
    const writes = refreshWrites(deviation, answer.producers, state.steps, state.facts, backtracks);
    const calls = answer.producers.map((id) => `step "${id}" (${plan.steps.find((s) => s.id === id)!.tool})`);
    const content =
      `Not run: ${verdict.reason}. Call ${calls.join(", ")} again first, then step "${step.id}"; ` +
      `until then ${Object.keys(writes.facts).join(", ")} is suspect.`;
    const update = { steps: writes.steps, facts: writes.facts, decisions: [decision] };
    return { content, status: "error", update: { ...update, planRun: { backtracks: writes.backtracks } } };
  }
  // Escalated (or skipped, for an optional step) as any failure before the call is.
  const failed: StepRun = { ...run, status: "failed", endedAt: env.at(), error };
  return settle(env, { step, run: failed, decisions: [decision], verdict, call, deviation });
}

/**
 * The step reads a fact whose producer runs again after `evidence.stale`: it waits for the new
 * observation. Refused like any call of a step that cannot run yet: counted, and past
 * `policy.maxRefusedCalls` a person is asked (policy/ladder/refused-call.ts).
 */
function waiting(env: CallEnv, step: Step, call: Call): ToolReply {
  const { state } = env;
  const producers = (step.inputs ?? []).flatMap((k) => {
    const f = state.facts[k];
    return f && f.label !== "trusted" ? [`"${f.producedBy}"`] : [];
  });
  const why =
    `step "${step.id}" waits for its inputs to be observed again: ` +
    `call step ${[...new Set(producers)].join(", ")} first`;
  const key = refusalKey(state.plan!.version, step.id);
  const count = (state.planRun.refusals?.[key] ?? 0) + 1;
  const verdict = refusedCall(step.id, why, count, env.options.policy);
  if (verdict.kind === "refuse")
    return { content: verdict.message, status: "error", update: { planRun: { refusals: { [key]: count } } } };
  const held = holdCall(env, step, call, verdict);
  return { ...held, update: { ...held.update, planRun: { ...held.update.planRun, refusals: { [key]: 0 } } } };
}
