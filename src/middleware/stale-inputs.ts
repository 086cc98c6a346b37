/**
 * Evidence freshness inside createAgent (docs/decisions/0041-evidence-freshness-and-drift.md,
 * docs/decisions/0053-middleware-quality-freshness-watch.md): before a plan step's call, the policy's
 * own check (`freshnessVerdict`, given the clock, the same checks as `beforeAttempt`) finds the inputs older than the step's `freshFor`.
 * The ladder answers as in the graph: the producers run again first (`evidence.stale`, a bounded
 * backtrack) — here the model is told to call them, and the step waits until they have — or, when a
 * producer has side effects or is no step of the plan, a person is asked (`evidence.stale-escalate`).
 */
import type { ErrorInfo, StepRun } from "../plan/schema/run.js";
import type { Step } from "../plan/schema/step.js";
import { ladderDecisionCount } from "../policy/attempt/attempt.js";
import { freshnessVerdict } from "../policy/attempt/freshness.js";
import { classify } from "../policy/ladder/classify.js";
import type { DeviationOf } from "../policy/ladder/deviation.js";
import { refreshWrites, staleAnswer } from "../policy/ladder/stale.js";
import { decisionAt } from "./decisions.js";
import { refuseNotReady } from "./not-ready.js";
import { settle, standing, type CallEnv, type ToolReply } from "./settle.js";

type Call = { tool: string; args: Record<string, unknown> };

/**
 * The step's call may not start on the inputs it has now: why, and what the ladder wrote; undefined when
 * it may. The policy decides once, from the run's snapshot and clock; this only performs its verdict.
 */
export function freshnessBefore(env: CallEnv, step: Step, call: Call): ToolReply | undefined {
  const { state } = env;
  const plan = state.plan!;
  const verdict = freshnessVerdict({
    step,
    run: state.steps[step.id],
    facts: state.facts,
    steps: state.steps,
    inPlan: (id) => plan.steps.some((s) => s.id === id),
    now: env.options.now(),
  });
  if (verdict.kind === "waits") {
    const producers = verdict.producers.map((id) => `"${id}"`).join(", ");
    const why = `step "${step.id}" waits for its inputs to be observed again: call step ${producers} first`;
    return refuseNotReady(env, step, call, why);
  }
  return verdict.kind === "stale" ? stale(env, step, call, verdict.deviation, verdict.error) : undefined;
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
