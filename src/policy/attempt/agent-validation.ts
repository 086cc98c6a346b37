/**
 * An agent step's validation tool, judged (docs/decisions/0021-agent-steps.md): its failure is the
 * answer's failure, and what it said is the feedback of the next attempt. Pure.
 */
import { evaluate } from "../../expr/cel.js";
import { toJsonValue } from "../../plan/json.js";
import type { Step } from "../../plan/schema/step.js";
import { preview, type CheckFailure } from "./checks.js";

/** How the validation tool ended: what it returned, or the message it threw. */
export type ValidationOutcome = { ok: true; output: unknown } | { ok: false; message: string };

/**
 * The validation tool's verdict on an answer: it fails by throwing or by an unmet
 * `validate.successSignal`; its failure output is the feedback of the next attempt.
 */
export function validationFailure(
  step: Step,
  outcome: ValidationOutcome | undefined,
  trusted: Readonly<Record<string, unknown>>,
): CheckFailure | undefined {
  const validate = step.validate;
  if (!validate || !outcome) return undefined;
  let why: string | undefined;
  if (!outcome.ok) why = outcome.message;
  else if (validate.successSignal) {
    const json = toJsonValue(outcome.output);
    const signal = evaluate(validate.successSignal, "successSignal", trusted, json.ok ? json.value : null);
    if (!signal.ok || signal.value !== true) why = `${preview(outcome.output)} (${validate.successSignal} is not true)`;
  }
  if (why === undefined) return undefined;
  const message = `validation tool "${validate.tool}" failed: ${why}`;
  return {
    deviation: { kind: "signal_unmet", message: `${step.id}: ${message}` },
    error: { name: "ValidationFailed", message },
  };
}
