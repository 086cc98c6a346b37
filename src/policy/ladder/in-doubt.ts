/**
 * A side-effecting call whose outcome is unknown — its intent is in the effect journal with no
 * result, because the process died in the call or our deadline cut it — and how it is settled before
 * the operation may run again (docs/decisions/0038-effect-journal.md). Pure. In order:
 * a person's retry of exactly this key, or a tool that honours keys, calls again under the same key;
 * else the step's read-only `verify` probe says whether it happened; else a person is asked
 * (`effect.in-doubt`). Never a silent second call.
 */
import type { ErrorInfo } from "../../plan/schema/run.js";
import type { Step, Verify } from "../../plan/schema/step.js";
import type { DeviationOf } from "./deviation.js";
import type { RuleId } from "./rules.js";

export type Settlement =
  /** Call again under the same key: the tool does the operation once per key, or a person said so. */
  | { kind: "call"; why: "approved" | "honours-keys" }
  /**
   * Run the step's verify probe and read its answer (`readProbe`): the attempt machine's `probe` command
   * (policy/attempt/next-attempt.ts), performed by the driver, whose answer the machine settles.
   */
  | { kind: "verify"; probe: Verify }
  /** Nothing settles it: the step deviates with `effect_in_doubt`, and a person is asked. */
  | { kind: "ask"; reason: string };

export interface InDoubt {
  /** What the call's step declares about its tool; a compensation's undo declares nothing (`{}`). */
  step: Pick<Step, "honoursIdempotencyKey" | "verify">;
  /** The tool the cut call was made with (the step's tool or its fallback). */
  tool: string;
  key: string;
  /** Tools `createPlanManager({ effects: { honoursKeys } })` declares to honour keys. */
  honoursKeys: ReadonlySet<string>;
  /** The step's record says a person approved calling again under this key. */
  approvedKey?: string | undefined;
  /** The probe was run already and could not say (it threw, or answered something else). */
  probeFailed?: string;
  /** The call is a compensation's undo: it has no probe, only `effects.honoursKeys` settles it. */
  undo?: boolean | undefined;
}

export function settleInDoubt(d: InDoubt): Settlement {
  if (d.approvedKey === d.key) return { kind: "call", why: "approved" };
  if (d.step.honoursIdempotencyKey === true || d.honoursKeys.has(d.tool)) return { kind: "call", why: "honours-keys" };
  if (d.step.verify && d.probeFailed === undefined) return { kind: "verify", probe: d.step.verify };
  if (d.undo === true)
    return {
      kind: "ask",
      reason:
        `the outcome of the undo ${d.tool} under key ${d.key} is unknown (the call was cut before it answered), ` +
        `and ${d.tool} is not declared to honour idempotency keys (effects.honoursKeys): did it happen?`,
    };
  return { kind: "ask", reason: inDoubtQuestion(d.tool, d.key, d.probeFailed) };
}

/** The question a person is asked about a call in doubt that neither its key nor its probe settled. */
export function inDoubtQuestion(tool: string, key: string, probeFailed?: string): string {
  const probe = probeFailed === undefined ? "the step has no verify probe" : `its verify probe ${probeFailed}`;
  return (
    `the outcome of ${tool} under key ${key} is unknown (the call was cut before it answered); ` +
    `the tool is not declared to honour idempotency keys and ${probe}: did it happen?`
  );
}

/**
 * Whether an error a tool threw leaves its call's outcome unknown: the tool gave up waiting or lost
 * the connection, not the outside system said no. A timeout or a connection reset of the tool's own
 * (Node's `ETIMEDOUT`/`ECONNRESET`, an `AbortError`/`TimeoutError`), or an MCP server's request
 * timeout or closed connection (JSON-RPC -32001/-32000, as the MCP adapter throws them): the request
 * may have reached the system and done its work, so the call is in doubt like one our deadline cut.
 */
export function cutByTheTool(error: ErrorInfo): boolean {
  if (error.code === "ETIMEDOUT" || error.code === "ECONNRESET") return true;
  if (error.name === "AbortError" || error.name === "TimeoutError") return true;
  if (error.name !== "ToolException") return false;
  const code = /^Error calling tool [^:]*: McpError: MCP error (-\d+):/.exec(error.message)?.[1];
  return code === "-32001" || code === "-32000";
}

/** What a verify probe said: it happened (its output is the call's), it did not, or nothing readable. */
export type ProbeRead =
  { kind: "happened"; output: unknown } | { kind: "not-happened" } | { kind: "unreadable"; problem: string };

/** A verify probe's answer read: `{ happened: boolean, output? }`, or why it settles nothing. */
export function readProbe(answer: unknown): ProbeRead {
  const happened = (answer as { happened?: unknown } | null)?.happened;
  if (typeof answer !== "object" || answer === null || Array.isArray(answer) || typeof happened !== "boolean")
    return { kind: "unreadable", problem: "answered something other than { happened: boolean, output? }" };
  if (!happened) return { kind: "not-happened" };
  return { kind: "happened", output: (answer as { output?: unknown }).output };
}

/** A probe that threw (or ran past the call's deadline) settles nothing either. */
export function probeThrew(error: ErrorInfo): ProbeRead {
  return { kind: "unreadable", problem: `threw (${error.message})` };
}

/** The probe's inputs: its own arguments, under the trusted facts it names that are known. */
export function probeArgs(verify: Verify, trusted: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const inputs = (verify.inputs ?? []).filter((k) => Object.hasOwn(trusted, k)).map((k) => [k, trusted[k]]);
  return { ...verify.args, ...Object.fromEntries(inputs) };
}

/** The ladder's verdict on an `effect_in_doubt` deviation: a person settles it. Never skipped, never a model's guess. */
export function inDoubtVerdict(deviation: DeviationOf<"effect_in_doubt">) {
  return {
    rule: "effect.in-doubt",
    failureClass: "unknown",
    action: "escalate",
    evidence: "sideeffect.outcome-unknown",
    reason: deviation.message,
  } as const;
}

/** How the journal settled a call in doubt without a person (runtime/journaled-call.ts, `SettledDoubt`). */
export type SettledHow = "verified" | "not-happened" | "recalled";

const SETTLED_RULES = {
  verified: "effect.verified",
  "not-happened": "effect.not-happened",
  recalled: "effect.recalled",
} as const satisfies Record<SettledHow, RuleId>;

/** The record of a call in doubt the journal settled: the probe's answer either way, or a call again under an honoured key. */
export function settledVerdict(how: SettledHow, tool: string, key: string) {
  const cut = `${tool}: the call under key ${key} was cut before it answered`;
  const reason = {
    verified: `${cut}; the verify probe says it happened, so its output is recorded and the tool is not called again`,
    "not-happened": `${cut}; the verify probe says it did not happen, so it may go out again under the same key`,
    recalled: `${cut}; the tool honours idempotency keys, so it was called again under the same key`,
  }[how];
  return { rule: SETTLED_RULES[how], failureClass: "none", reason } as const;
}

/** The record of a call whose result the journal holds though the run's checkpoint lost it. */
export function journaledVerdict(tool: string, key: string) {
  const reason = `${tool}: the call under key ${key} ended before the run's last checkpoint; the effect journal holds its result, which is reused and the tool not called again`;
  return { rule: "effect.reused", failureClass: "none", reason } as const;
}

/**
 * How a decision settled a call in doubt, as the views count it (`views/effects.ts`): the probe said it
 * happened (`verified`) or not (`notHappened`), the tool honours keys and was called again (`recalled`), a
 * person was asked (`asked`) and said it happened (`happened`) or to call it again (`retried`).
 */
export type InDoubtSettlement = "verified" | "notHappened" | "recalled" | "asked" | "happened" | "retried";

const SETTLED_BY: Readonly<Record<string, InDoubtSettlement>> = {
  "effect.verified": "verified",
  "effect.not-happened": "notHappened",
  "effect.recalled": "recalled",
  "effect.in-doubt": "asked",
  "human.effect-happened": "happened",
  "human.effect-retry": "retried",
} satisfies Partial<Record<RuleId, InDoubtSettlement>>;

/** The settlement a decision's rule records, if it is one. */
export function inDoubtSettlement(rule: string): InDoubtSettlement | undefined {
  return Object.hasOwn(SETTLED_BY, rule) ? SETTLED_BY[rule] : undefined;
}
