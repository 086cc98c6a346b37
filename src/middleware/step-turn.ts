/**
 * A call of a plan step within its model turn (docs/decisions/0043-effects-in-the-middleware.md): the
 * untrusted-arguments hold and the checks before the step (watchers, freshness) come first, then the
 * turn's claim on a side-effecting step, then the one attempt driver (step-call.ts).
 */
import type { ToolCallRequest } from "langchain";
import type { Step } from "../plan/schema/step.js";
import { reuseVerdict, sideEffecting } from "../policy/attempt/attempt.js";
import { preview } from "../policy/attempt/checks.js";
import type { ResolvedAgentOptions } from "./agent-options.js";
import { beforeStep } from "./before-step.js";
import { heldCall } from "./call-taint.js";
import { decisionAt } from "./decisions.js";
import { refuseNotReady } from "./not-ready.js";
import type { CallEnv, ToolReply } from "./settle.js";
import { firstKey, runStep } from "./step-call.js";
import { turnOf, type Claim, type TurnClaims } from "./turn.js";

/**
 * A call of a plan step. A side-effecting step takes one call per model turn: the first to reach it
 * runs it; another of the same operation gets its result (`effect.reused`), another of a different
 * one is refused (middleware/turn.ts).
 */
export async function stepCall(
  env: CallEnv,
  request: ToolCallRequest,
  route: { step: Step; args: Record<string, unknown> },
  options: ResolvedAgentOptions,
  turns: TurnClaims,
): Promise<ToolReply> {
  const { step, args } = route;
  const call = { tool: request.toolCall.name, args };
  const run = () =>
    heldCall(env, step, call.tool, args, effectsOf(options, step, call.tool)) ??
    beforeStep(env, step, call, () => runStep(env, step, call.tool, args));
  const callId = request.toolCall.id;
  const turn = sideEffecting(step) ? turnOf(request.state.messages, callId) : undefined;
  if (turn === undefined || callId === undefined) return run();
  const key = firstKey(env, step, call.tool, args);
  const taken = turns.take(env.threadId, turn, { callId, stepId: step.id, key, args });
  if (taken.kind === "taken") return sameTurn(env, step, call, key, taken.claim);
  let result: ToolReply | undefined;
  try {
    result = await run();
    return result;
  } finally {
    taken.end(result);
  }
}

/** A second call of a side-effecting step in one model turn: the first's result for the same operation, else refused. */
async function sameTurn(
  env: CallEnv,
  step: Step,
  call: { tool: string; args: Record<string, unknown> },
  key: string | undefined,
  first: Claim,
): Promise<ToolReply> {
  if (key === undefined || first.key !== key) {
    const why =
      `step "${step.id}" is already being called in this model turn, with ${preview(first.args)}; ` +
      "a side-effecting step makes one call: for another, add a step with write_plan";
    return refuseNotReady(env, step, call, why);
  }
  const done = await first.done.catch(() => undefined);
  const effect = done?.update.sideEffects?.find((e) => e.idempotencyKey === key);
  // Another step's call made the operation: this step's call finds it committed, as a later turn's would.
  if (effect && first.stepId !== step.id) {
    const sideEffects = [...env.state.sideEffects, effect];
    return runStep({ ...env, state: { ...env.state, sideEffects } }, step, call.tool, call.args);
  }
  if (!effect) {
    const why = done ? `: ${done.content}` : "";
    const content = `Not run: step "${step.id}" is already being called in this model turn with the same arguments, and that call did not commit${why}`;
    return { content, status: "error", update: {} };
  }
  const { rule, reason } = reuseVerdict(step.id, effect.stepId, key);
  const attempts = done?.update.steps?.[step.id]?.attempts ?? 1;
  const decision = decisionAt(
    { rule, reason },
    { stepId: step.id, attempt: attempts, planVersion: env.state.plan!.version, at: env.at() },
  );
  const output = JSON.stringify(effect.output) ?? "null";
  const content = `Step "${step.id}" ran once for this operation in this model turn (not run again); its result: ${output}`;
  return { content, status: "success", update: { decisions: [decision] } };
}

/** The side effects of a step's call: the tool's own (`sideEffectTools`), or the step's when it declares them. */
function effectsOf(options: ResolvedAgentOptions, step: Step, tool: string): string[] {
  if (options.sideEffectTools.has(tool)) return [tool];
  return step.idempotent === false && tool === step.tool ? (step.sideEffects ?? []) : [];
}
