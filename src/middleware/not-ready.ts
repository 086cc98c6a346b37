/**
 * A call to a step that cannot run yet (its dependencies, its inputs, another call of the same turn):
 * the model is told why, the refusal is counted, and past `policy.maxRefusedCalls` a person is asked
 * (policy/ladder/refused-call.ts).
 */
import type { Step } from "../plan/schema/step.js";
import { refusedCall } from "../policy/ladder/refused-call.js";
import { refusalKey } from "./agent-state.js";
import { holdCall, type CallEnv, type ToolReply } from "./settle.js";

export function refuseNotReady(
  env: CallEnv,
  step: Step,
  call: { tool: string; args: Record<string, unknown> },
  why: string,
): ToolReply {
  const key = refusalKey(env.state.plan!.version, step.id);
  const count = (env.state.planRun.refusals?.[key] ?? 0) + 1;
  const verdict = refusedCall(step.id, why, count, env.options.policy);
  if (verdict.kind === "refuse")
    return { content: verdict.message, status: "error", update: { planRun: { refusals: { [key]: count } } } };
  const held = holdCall(env, step, call, verdict);
  return { ...held, update: { ...held.update, planRun: { ...held.update.planRun, refusals: { [key]: 0 } } } };
}
