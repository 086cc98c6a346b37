/**
 * Inside createAgent the model chooses a call's arguments when it makes the call, not in the plan:
 * a plan that passed every guard can still be followed by `pay({ iban: <copied from a web page> })`.
 * So a side-effecting call whose arguments carry a literal found in untrusted text — tool output
 * that is not a planned fact, a tool's error message — and nowhere the run knew waits for a person
 * (`guard.untrusted-arguments`), as the graph's replans do
 * (docs/decisions/0013-untrusted-facts-do-not-steer-the-plan.md). Pure.
 */
import { callFindings, leaves, type TaintedText } from "./taint.js";
import type { GuardHit } from "../ladder/guards.js";
import { preview } from "../attempt/checks.js";

export interface UntrustedCall {
  stepId: string;
  tool: string;
  args: Readonly<Record<string, unknown>>;
  sideEffects: string[];
}

/**
 * `known`: text the run vouches for — the user's words, the plan versions' arguments — matched
 * wherever it occurs; `trustedFacts`: values plan steps produced, each vouching for itself as a
 * whole value only (the plan's own data flow, as an `inputs` key of a plan is in the graph).
 */
export function untrustedCall(
  call: UntrustedCall,
  known: readonly string[],
  trustedFacts: Readonly<Record<string, unknown>>,
  texts: readonly TaintedText[],
): GuardHit | undefined {
  // A fact vouches for its whole value only: a token lifted out of a free-text fact is not planned data.
  const facts = new Set(leaves(Object.values(trustedFacts)));
  const findings = callFindings({ ...call, args: withoutValues(call.args, facts) }, known, texts);
  if (findings.length === 0) return undefined;
  const why = findings.map((f) => f.detail).join("; ");
  return {
    rule: "guard.untrusted-arguments",
    reason:
      `the call ${call.tool} ${preview(call.args)} for step "${call.stepId}" carries ${why}: ` +
      "a person must approve it",
  };
}

/** The arguments without the leaf values that equal a vouched value (whole-value match). */
function withoutValues(
  value: Readonly<Record<string, unknown>>,
  vouched: ReadonlySet<string>,
): Record<string, unknown> {
  const strip = (v: unknown): unknown => {
    if (typeof v === "string" || typeof v === "number") return vouched.has(String(v)) ? null : v;
    if (Array.isArray(v)) return v.map(strip);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, strip(x)]));
    return v;
  };
  return strip(value) as Record<string, unknown>;
}
