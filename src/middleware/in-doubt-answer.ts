/**
 * A person's answer to a step call whose outcome is unknown (`effect.in-doubt`,
 * docs/decisions/0043-effects-in-the-middleware.md), as the graph takes it: `happened` with the
 * output to record, checked like a tool's (the step's `produces`, its success signal, the JSON
 * limits) — an output that fails is refused and the question asked again —; `retry`, one more call
 * under exactly this key; `abort`, the run ends.
 */
import { PlanManagerError } from "../errors.js";
import { factValues, makeFacts } from "../plan/facts.js";
import type { StepRun } from "../plan/schema/run.js";
import { attempt } from "../policy/attempt/attempt.js";
import { answerRule } from "../policy/ladder/person.js";
import type { Decision } from "../policy/ladder/decision.js";
import { decisionAt } from "./decisions.js";
import { ask, readInDoubtAnswer, reviewRequest, type InDoubtAnswer } from "./person-review.js";
import type { AgentPlanUpdate, AgentPlanValues, Escalation } from "./agent-state.js";
import { withoutApproval } from "../policy/attempt/approval.js";

export interface AnsweredDoubt {
  update: AgentPlanUpdate;
  note: string;
  /** The effect a person said happened: written to the effect journal under its key. */
  happened?: { key: string; output: unknown };
  abort?: true;
}

export function answerInDoubt(
  state: AgentPlanValues,
  e: Escalation & { inDoubt: { key: string; attempt?: number | undefined } },
  run: StepRun,
  at: string,
): AnsweredDoubt {
  const { key } = e.inDoubt;
  const version = state.plan?.version ?? 0;
  const answer = ask(question(state, e), (value) => checked(state, e, run, readInDoubtAnswer(value)));
  const place = { stepId: e.stepId, attempt: run.attempts, planVersion: version, at };
  const { error: _error, ...rest } = withoutApproval(run);
  if (answer.type === "abort") {
    const reason = `a person ended the run at step "${e.stepId}"${answer.reason ? `: ${answer.reason}` : ""}`;
    const decisions: Decision[] = [decisionAt({ rule: answerRule("abort"), reason, by: "person" }, place)];
    return { update: { decisions, status: "aborted" }, note: `${reason}.`, abort: true };
  }
  if (answer.type === "retry") {
    const reason = `a person allowed ${e.tool} once more under key ${key}`;
    const decisions = [decisionAt({ rule: answerRule("effect-retry"), reason, by: "person" }, place)];
    // The approved call is journaled above the intent asked about (runtime/journaled-call.ts).
    const approval = { key, ...(e.inDoubt.attempt === undefined ? {} : { attempt: e.inDoubt.attempt }) };
    const approved = { ...rest, status: "pending" as const, retryBase: run.attempts, approval };
    const steps = { [e.stepId]: approved };
    return { update: { decisions, steps }, note: `${reason}: call ${e.tool} with ${JSON.stringify(e.args)}.` };
  }
  const reason = `a person said ${e.tool} under key ${key} took effect; its output is recorded`;
  const step = state.plan?.steps.find((s) => s.id === e.stepId);
  const values = answer.values;
  const facts = makeFacts(values, { producedBy: e.stepId, planVersion: version, assumptions: step?.assumptions ?? [] });
  const done: StepRun = { ...rest, status: "succeeded", output: answer.output, endedAt: at };
  const known = state.sideEffects.some((x) => x.idempotencyKey === key);
  const effect = { stepId: e.stepId, idempotencyKey: key, at, output: answer.output };
  const update: AgentPlanUpdate = {
    decisions: [decisionAt({ rule: answerRule("effect-happened"), reason, by: "person" }, place)],
    steps: { [e.stepId]: done },
    facts,
    sideEffects: known ? [] : [effect],
    planRun: { successes: [`${version}:${e.stepId}:${run.attempts}`] },
  };
  return { update, note: `${reason}.`, happened: { key, output: answer.output } };
}

type Checked =
  Exclude<InDoubtAnswer, { type: "happened" }> | { type: "happened"; output: unknown; values: Record<string, unknown> };

/** A `happened` output judged like the tool's would have been; one that fails is not an answer. */
function checked(state: AgentPlanValues, e: Escalation, run: StepRun, answer: InDoubtAnswer): Checked {
  if (answer.type !== "happened") return answer;
  const step = state.plan?.steps.find((s) => s.id === e.stepId);
  if (!step || !state.plan) return { ...answer, values: {} };
  const judged = attempt({
    step,
    run,
    result: { ok: true, output: answer.output },
    plan: state.plan,
    facts: state.facts,
    trusted: factValues(state.facts),
  });
  if (judged.kind === "deviation")
    throw new PlanManagerError(
      "invalid_resume",
      `planMiddleware: the output given for step "${e.stepId}" fails its checks: ${judged.deviation.message}`,
      { path: "resume.output" },
    );
  return { type: "happened", output: judged.output, values: judged.values };
}

function question(state: AgentPlanValues, e: Escalation) {
  const options = 'Answer { action: "happened", output }, { action: "retry" } or { action: "abort" }.';
  const description = `Step "${e.stepId}" needs a person: ${e.reason} [${e.rule}]. ${options}`;
  const request = reviewRequest(
    "escalation",
    { name: e.tool, args: e.args, description },
    { rule: e.rule, planVersion: state.plan?.version ?? 0, stepId: e.stepId },
  );
  return { ...request, reviewConfigs: [], options: ["happened" as const, "retry" as const, "abort" as const] };
}
