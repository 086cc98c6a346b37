/**
 * Argument provenance for side-effecting steps a replan adds: an injected account number must not
 * flow into a payment without a person seeing it. Two paths carry data into a call: `inputs`
 * (fact keys resolved at run time) and literal `args` a planner copied out of the facts it read.
 * Inputs are traced exactly; literals by verbatim match against the text of post-plan facts,
 * which is a heuristic (a planner that paraphrases escapes it), recorded in decision 0013.
 */
import type { CapabilityBaseline, CapabilityFinding } from "./capability.js";

/** Data produced after the original plan was made: fact keys (with where from) and their text. */
export interface Taint {
  keys: ReadonlyMap<string, string>;
  texts: readonly string[];
}

/**
 * Shorter values are too common to mean anything ("yes", "EUR", "10"): matching them would ask a
 * person about every replan. Decision 0013 has the trade-off.
 */
export const MIN_TRACED_LENGTH = 4;

export function taintFindings(
  stepId: string,
  use: ToolUse,
  sideEffects: string[],
  baseline: CapabilityBaseline,
  taint: Taint,
): CapabilityFinding[] {
  const findings: CapabilityFinding[] = [];
  const approved = baseline.inputs.get(use.tool);
  for (const key of use.inputs) {
    const from = taint.keys.get(key);
    // The same tool reading the same key in an earlier version is a flow a plan already had.
    if (from === undefined || approved?.has(key)) continue;
    const detail = `step "${stepId}" would pass fact "${key}" (${from}) to ${use.tool}`;
    findings.push({ kind: "untrusted_input", stepId, tool: use.tool, sideEffects, detail });
  }
  for (const value of new Set(leaves(use.args))) {
    if (!traced(value, baseline.known, taint.texts)) continue;
    const shown = JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
    const detail = `step "${stepId}" would call ${use.tool} with ${shown}, a value found in tool output`;
    findings.push({ kind: "untrusted_argument", stepId, tool: use.tool, sideEffects, detail });
  }
  return findings;
}

/** A value that occurs in post-plan tool output and nowhere the run knew before (goal, inputs, earlier args). */
function traced(value: string, known: readonly string[], texts: readonly string[]): boolean {
  const v = value.trim();
  if (v.length < MIN_TRACED_LENGTH) return false;
  if (known.some((k) => occurs(v, k))) return false;
  return texts.some((t) => occurs(v, t));
}

/** `needle` in `text` as a whole token: "4111" is not found in "41112". */
export function occurs(needle: string, text: string): boolean {
  let at = text.indexOf(needle);
  while (at >= 0) {
    const before = at === 0 ? "" : text[at - 1]!;
    const after = text[at + needle.length] ?? "";
    if (!isWordChar(before) || !isWordChar(needle[0]!)) {
      if (!isWordChar(after) || !isWordChar(needle[needle.length - 1]!)) return true;
    }
    at = text.indexOf(needle, at + 1);
  }
  return false;
}

const isWordChar = (c: string) => /[\p{L}\p{N}_]/u.test(c);

/** A tool a step may call: its own, or its fallback's. */
export interface ToolUse {
  stepId: string;
  tool: string;
  main: boolean;
  args: Readonly<Record<string, unknown>>;
  inputs: readonly string[];
}

/** Scalar values inside arguments, as text (booleans and null carry no payload worth tracing). */
export function leaves(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value === "number" || typeof value === "bigint") return [String(value)];
  if (Array.isArray(value)) return value.flatMap(leaves);
  if (value && typeof value === "object") return Object.values(value).flatMap(leaves);
  return [];
}
