/**
 * The checks around one step attempt, as pure functions: before the tool runs (trusted inputs,
 * preconditions, budget, a committed side effect), and after it returns (storable output,
 * success signal, produced fields). Each failure is a deviation for the classifier plus the
 * error recorded on the step. No LangGraph, no clock, no I/O.
 */
import { compileExpression, evaluate } from "../../expr/cel.js";
import { producedValues } from "../../plan/facts.js";
import { LIMITS } from "../../plan/schema/primitives.js";
import { type ErrorInfo, type Fact, type SideEffectRecord, type StepRun } from "../../plan/schema/run.js";
import { type Step } from "../../plan/schema/step.js";
import { toJsonValue } from "../../plan/json.js";
import type { DeviationDraft } from "../ladder/deviation.js";
import { approvalOf } from "./approval.js";

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

/** The idempotency key of a step's next call, and the key 0.x gave the same operation. */
export interface EffectKey {
  key: string;
  legacy: string;
}

/** A committed operation the step's next call equals: its output is reused, the tool is not called. */
export interface ReusedEffect {
  reuse: SideEffectRecord;
  output: unknown;
}

/**
 * What the committed side effects say about a step's next call (docs/decisions/0006-idempotency-keys-name-the-operation.md):
 * - the same operation committed before, under any step id → reuse its output (a committed effect
 *   never runs twice);
 * - the step committed a *different* operation → a person decides, and their `retry` approves
 *   exactly the new key (the run's `approval`);
 * - otherwise nothing stands in the way.
 */
export function checkCommittedEffect(
  step: Step,
  key: EffectKey | undefined,
  run: StepRun | undefined,
  committed: readonly SideEffectRecord[],
  steps: Readonly<Record<string, StepRun>>,
  operation: string,
): ReusedEffect | CheckFailure | undefined {
  if (key === undefined) return undefined;
  const same = committed.find((e) => e.idempotencyKey === key.key || e.idempotencyKey === key.legacy);
  if (same) {
    const output = committedOutput(same, committed, steps);
    // A record from before outputs were kept, whose step has run again since: the call goes out
    // under the committed key, and a tool that honours keys answers with what it did.
    return output === undefined ? undefined : { reuse: same, output };
  }
  const last = committed.findLast((e) => e.stepId === step.id);
  if (!last || approvalOf(run)?.key === key.key) return undefined;
  const message =
    `step "${step.id}" already committed its side effect under key ${last.idempotencyKey}; running it again with a ` +
    `changed operation (${operation}) would commit a second one under ${key.key}`;
  return {
    deviation: { kind: "side_effect_changed", message, committedKey: last.idempotencyKey, proposedKey: key.key },
    error: { name: "CommittedSideEffect", message },
  };
}

/** The output an effect committed with: kept on its record, or (older records) its step's if nothing replaced it. */
function committedOutput(
  record: SideEffectRecord,
  committed: readonly SideEffectRecord[],
  steps: Readonly<Record<string, StepRun>>,
): unknown {
  if (record.output !== undefined) return record.output;
  const run = steps[record.stepId];
  const latest = committed.findLast((e) => e.stepId === record.stepId) === record;
  return latest && (run?.status === "succeeded" || run?.status === "invalidated") ? run.output : undefined;
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
