/**
 * Inside createAgent the model chooses a call's arguments when it makes the call, not in the plan:
 * a plan that passed every guard can still be followed by `pay({ iban: <copied from a web page> })`.
 * So a side-effecting call whose arguments carry a literal found in untrusted text — tool output
 * that is not a planned fact, a tool's error message — and nowhere the run knew waits for a person
 * (`guard.untrusted-arguments`), as the graph's replans do
 * (docs/decisions/0013-untrusted-facts-do-not-steer-the-plan.md). Pure.
 */
import { callFindings, leaves, type TaintedText } from "./capability-taint.js";
import type { GuardHit } from "./replan-guards.js";
import { preview } from "./step-checks.js";

export interface UntrustedCall {
  stepId: string;
  tool: string;
  args: Readonly<Record<string, unknown>>;
  sideEffects: string[];
}

/**
 * `known`: text the run vouches for — the user's words, the plan versions' arguments — to which the
 * values of trusted facts are added: a fact a plan step produced is the plan's own data flow, as an
 * `inputs` key of a plan is in the graph.
 */
export function untrustedCall(
  call: UntrustedCall,
  known: readonly string[],
  trustedFacts: Readonly<Record<string, unknown>>,
  texts: readonly TaintedText[],
): GuardHit | undefined {
  const vouched = [...known, ...leaves(Object.values(trustedFacts))];
  const findings = callFindings(call, vouched, texts);
  if (findings.length === 0) return undefined;
  const why = findings.map((f) => f.detail).join("; ");
  return {
    rule: "guard.untrusted-arguments",
    reason:
      `the call ${call.tool} ${preview(call.args)} for step "${call.stepId}" carries ${why}: ` +
      "a person must approve it",
  };
}
