/**
 * Which step a tool call belongs to (pure): the step id given as `step` in the call's arguments,
 * or else the ready step that names the tool (as its tool or its fallback). A call for a step that
 * already succeeded gets the recorded output instead of running again; a call for a step that is
 * not ready, or rests on a false assumption, is refused without running. A tool no step names runs
 * as it would without the middleware.
 */
import { canonical } from "../plan/diff.js";
import { factValues } from "../plan/facts.js";
import type { Step } from "../plan/schema/step.js";
import { mayStart, readinessOf, type StartRefusal, type StartRule } from "../policy/attempt/may-start.js";
import type { AgentPlanValues } from "./agent-state.js";

export type Route =
  | { kind: "free" }
  | { kind: "step"; step: Step; args: Record<string, unknown> }
  | { kind: "done"; step: Step; output: unknown }
  /** `rule`: the start clause that refused it (policy/attempt/may-start.ts `START_RULES`); none for a tool the step does not use. */
  | { kind: "refuse"; step: Step; rule?: StartRule; message: string; args: Record<string, unknown> };

export function routeCall(
  state: Pick<AgentPlanValues, "plan" | "steps" | "facts" | "planRun">,
  tool: string,
  rawArgs: Record<string, unknown>,
): Route {
  const plan = state.plan;
  if (!plan) return { kind: "free" };
  const named = typeof rawArgs.step === "string" ? plan.steps.find((s) => s.id === rawArgs.step) : undefined;
  const args = named ? withoutStep(rawArgs) : rawArgs;
  const uses = (s: Step) => s.tool === tool || s.fallback?.tool === tool;
  const candidates = named ? [named] : plan.steps.filter(uses);
  const first = candidates[0];
  if (!first) return { kind: "free" };
  if (named && !uses(named))
    return { kind: "refuse", step: named, message: `step "${named.id}" uses ${named.tool}, not ${tool}`, args };
  // Whether a step may start is the policy's one answer (policy/attempt/may-start.ts), the graph's too; the
  // model's turn is its own dispatch, so there is no dispatcher to ask about.
  const standing = readinessOf(plan, state.steps, factValues(state.facts), state.planRun.falsified);
  const verdicts = new Map(candidates.map((s) => [s.id, mayStart(s, standing)]));
  const step = candidates.find((s) => verdicts.get(s.id)!.ok);
  if (step) return { kind: "step", step, args };
  const done = candidates.find((s) => state.steps[s.id]?.status === "succeeded");
  if (done) return { kind: "done", step: done, output: state.steps[done.id]!.output };
  const refused = candidates.find((s) => state.steps[s.id]?.status === "failed") ?? first;
  const verdict = verdicts.get(refused.id) as StartRefusal;
  return { kind: "refuse", step: refused, rule: verdict.rule, message: toModel(verdict), args };
}

/** A refusal as the model reads it: what it can do about a step that will not become ready by waiting. */
function toModel(refusal: StartRefusal): string {
  const revise = refusal.rule === "start.false-assumption" || refusal.rule === "start.failed";
  return revise ? `${refusal.reason}: revise the plan with write_plan` : refusal.reason;
}

function withoutStep(args: Record<string, unknown>): Record<string, unknown> {
  const { step: _step, ...rest } = args;
  return rest;
}

/** The identity of a call for the identical-failing-call guard: step, tool and canonical arguments. */
export function callKey(stepId: string, tool: string, args: Readonly<Record<string, unknown>>): string {
  return `${stepId}|${canonical({ tool, args })}`;
}
