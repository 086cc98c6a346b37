/**
 * A step the calling agent does itself (docs/decisions/0042-external-steps.md), as the one attempt
 * function sees it: the offer is the call, the agent's submission its result. Pure.
 *
 * - `externalCall`: the "call" an offer makes — the tool name its key and journal entry carry and its
 *   resolved arguments — so a side-effecting external step's key is `effectKey`'s like any call's.
 * - `submittedResult`: a submission as a call result; an error's `class` names the error the evidence
 *   rules read (`TransientError`, `PermanentError`, `AssumptionBrokenError`), none leaves it to the
 *   message (`ExternalStepError`, read like a tool's error).
 */
import type { SubmittedError } from "../../plan/schema/interrupts.js";
import type { ErrorInfo } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import { EXTERNAL_ERROR_NAME } from "../ladder/evidence-rules.js";

const CLASS_NAMES: Record<NonNullable<SubmittedError["class"]>, string> = {
  transient: "TransientError",
  permanent: "PermanentError",
  assumption_broken: "AssumptionBrokenError",
};

/**
 * What an offer of `step` stands for: the tool `external:<instructions>` (instructions are what the
 * agent is asked to do, so two external steps with different instructions are two operations) with the
 * step's arguments and its trusted inputs.
 */
export function externalCall(
  step: Step,
  trusted: Readonly<Record<string, unknown>>,
): { tool: string; args: Record<string, unknown>; inputs: Record<string, unknown> } {
  const inputs: Record<string, unknown> = {};
  for (const key of step.inputs ?? []) if (Object.hasOwn(trusted, key)) inputs[key] = trusted[key];
  return { tool: `external:${step.external?.instructions ?? ""}`, args: { ...step.args, ...inputs }, inputs };
}

/** A submission as the result of the offer's call: the output, or the error named for its class. */
export function submittedResult(submission: {
  output?: unknown;
  error?: SubmittedError | undefined;
}): { ok: true; output: unknown } | { ok: false; error: ErrorInfo; timeout: false } {
  const { error } = submission;
  if (!error) return { ok: true, output: submission.output };
  const info: ErrorInfo = {
    name: error.class ? CLASS_NAMES[error.class] : EXTERNAL_ERROR_NAME,
    message: error.message,
  };
  if (error.retry_after_ms !== undefined) info.retryAfterMs = error.retry_after_ms;
  if (error.assumption !== undefined) info.assumptionId = error.assumption;
  return { ok: false, error: info, timeout: false };
}
