/**
 * The checks around one step attempt, as pure functions: before the tool runs (trusted inputs,
 * preconditions, budget, a committed side effect), and after it returns (storable output,
 * success signal, produced fields). Each failure is a deviation for the classifier plus the
 * error recorded on the step. No LangGraph, no clock, no I/O.
 */
import { compileExpression, evaluate } from "../expr/cel.js";
import { producedValues } from "../plan/facts.js";
import { LIMITS, type ErrorInfo, type Fact, type SideEffectRecord, type Step, type StepRun } from "../plan/schema.js";
import { toJsonValue } from "../plan/json.js";
import type { DeviationDraft } from "./deviation.js";

/** A check that failed: what the classifier sees, and what the step record keeps. */
export interface CheckFailure {
  deviation: DeviationDraft;
  error: ErrorInfo;
}

/** Inputs and preconditions read trusted facts only; a missing or untrusted fact fails the precondition. */
export function checkInputs(
  step: Step,
  facts: Readonly<Record<string, Fact>>,
  trusted: Readonly<Record<string, unknown>>,
): CheckFailure | undefined {
  const missing = (step.inputs ?? []).filter((key) => !Object.hasOwn(trusted, key));
  if (missing.length === 0) return undefined;
  const labels = missing.map((k) => (facts[k] ? `${k} (${facts[k].label})` : `${k} (missing)`));
  const plural = labels.length > 1 ? "s" : "";
  return {
    deviation: { kind: "precondition", message: `input fact${plural} not trusted: ${labels.join(", ")}`, missing },
    error: { name: "PreconditionFailed", message: `inputs not trusted: ${labels.join(", ")}` },
  };
}

export function checkPreconditions(step: Step, trusted: Readonly<Record<string, unknown>>): CheckFailure | undefined {
  for (const expression of step.preconditions ?? []) {
    const result = evaluate(expression, "precondition", trusted);
    if (result.ok && result.value === true) continue;
    const why = result.ok
      ? "is false"
      : result.missing
        ? `is false (${result.message})`
        : `could not be evaluated (${result.message})`;
    const message = `precondition ${JSON.stringify(expression)} ${why}`;
    const read = compileExpression(expression, "precondition");
    const missing = !result.ok && result.missing ? { missing: result.missing } : {};
    return {
      deviation: {
        kind: "precondition",
        message,
        expression,
        facts: read.ok ? [...read.expression.facts] : [],
        ...missing,
      },
      error: { name: "PreconditionFailed", message },
    };
  }
  return undefined;
}

/** `budget.maxCost`: a step whose cost would exceed it is not started. */
export function checkBudget(
  step: Step,
  spent: number,
  maxCost: number | undefined,
  cost = step.cost ?? 0,
): CheckFailure | undefined {
  if (maxCost === undefined || spent + cost <= maxCost) return undefined;
  const spentSoFar = `${round(spent)} of ${maxCost} is spent`;
  const message = `step "${step.id}" costs ${cost}; ${spentSoFar}, so it would exceed budget.maxCost`;
  return { deviation: { kind: "budget", message }, error: { name: "BudgetExhausted", message } };
}

/**
 * A step that already committed one operation must not quietly commit a different one
 * (backtracking, or a replan that changed its arguments): a person decides, and a person's
 * `retry` approves exactly the new key (`run.approvedKey`).
 */
export function checkCommittedEffect(
  step: Step,
  key: string | undefined,
  run: StepRun | undefined,
  committed: readonly SideEffectRecord[],
  operation: string,
): CheckFailure | undefined {
  if (key === undefined) return undefined;
  const last = committed.findLast((e) => e.stepId === step.id);
  if (!last || last.idempotencyKey === key || run?.approvedKey === key) return undefined;
  const message =
    `step "${step.id}" already committed its side effect under key ${last.idempotencyKey}; running it again with a ` +
    `changed operation (${operation}) would commit a second one under ${key}`;
  return {
    deviation: { kind: "side_effect_changed", message, committedKey: last.idempotencyKey, proposedKey: key },
    error: { name: "CommittedSideEffect", message },
  };
}

/**
 * What the tool's output yields once judged: the output as stored (JSON only: a `Date` becomes
 * its ISO string) and the facts it produces. A rejected output that was storable is kept for the
 * record (`output`), so a person sees what the tool returned.
 */
export type Judgement =
  { ok: true; values: Record<string, unknown>; output: unknown } | ({ ok: false; output?: unknown } & CheckFailure);

/**
 * Judges a tool's output: it must be storable (size, depth), meet the success signal, and carry
 * every produced field. An output the run cannot store is its own deviation (`output_rejected`,
 * deterministic): it says nothing about the plan's assumptions, unlike an unmet success signal.
 */
export function judgeOutput(step: Step, raw: unknown, trusted: Readonly<Record<string, unknown>>): Judgement {
  // Normalised at the boundary, so a resumed run sees exactly what an uninterrupted one saw.
  const json = toJsonValue(raw);
  const storable = !json.ok
    ? json.message
    : json.bytes > LIMITS.maxJsonBytes
      ? `output is ${json.bytes} bytes of JSON, over the ${LIMITS.maxJsonBytes}-byte fact limit`
      : undefined;
  if (storable || !json.ok) {
    return {
      ok: false,
      deviation: { kind: "output_rejected", message: `${step.id}: ${storable}` },
      error: { name: "OutputRejected", message: storable! },
    };
  }
  const output = json.value;
  if (step.successSignal) {
    const signal = evaluate(step.successSignal, "successSignal", trusted, output);
    if (!signal.ok || signal.value !== true) {
      const why = signal.ok ? "is false" : `could not be evaluated (${signal.message})`;
      const message = `success signal ${JSON.stringify(step.successSignal)} ${why} for output ${preview(output)}`;
      return { ok: false, ...unmet(step, message, step.successSignal), output };
    }
  }
  const { values, missing } = producedValues(step, output);
  if (missing.length > 0) {
    const plural = missing.length > 1 ? "s" : "";
    return {
      ok: false,
      ...unmet(step, `output ${preview(output)} lacks produced field${plural} ${missing.join(", ")}`),
      output,
    };
  }
  return { ok: true, values, output };
}

function unmet(step: Step, message: string, expression?: string): CheckFailure {
  const deviation: DeviationDraft = {
    kind: "signal_unmet",
    message: `${step.id}: ${message}`,
    ...(expression !== undefined ? { expression } : {}),
  };
  return { deviation, error: { name: "SuccessSignalUnmet", message } };
}

export function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
