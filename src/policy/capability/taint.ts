/**
 * Argument provenance for side-effecting steps a new version adds or feeds: an injected account
 * number must not flow into a payment without a person seeing it. Two paths carry data into a
 * call: `inputs` (fact keys resolved at run time, traced through the steps that produce them,
 * capability-flow.ts) and literal `args` a planner copied out of text it read — facts, tools'
 * error messages, replan memory. Literals are traced by verbatim match, a heuristic (a planner
 * that paraphrases escapes it), recorded in docs/decisions/0013-untrusted-facts-do-not-steer-the-plan.md.
 */
import { executorOf } from "../../plan/executor-of.js";
import type { ErrorInfo } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import type { CapabilityBaseline, CapabilityFinding } from "./types.js";
import type { Decision } from "../ladder/decision.js";
import { occurs } from "./words.js";

export { occurs };

/** Where untrusted text came from, as a reviewer reads it ("a value found in …"). */
export type TaintSource = "tool output" | "a tool's error message" | "replan memory";

/** Text no one vouched for that a planner (or the model) read. */
export interface TaintedText {
  text: string;
  source: TaintSource;
}

/** Tainted fact keys, each with where it came from; looked up one by one (a long run has thousands). */
export interface TaintKeys {
  get(key: string): string | undefined;
  has(key: string): boolean;
}

/** Data produced after the original plan was made: fact keys (with where from) and untrusted text. */
export interface Taint {
  keys: TaintKeys;
  texts: readonly TaintedText[];
  /**
   * The first of `texts` the value occurs in, when an index answers it without the list
   * (docs/decisions/0058-incremental-taint-index.md). Default: `texts` scanned.
   */
  find?(value: string): TaintedText | undefined;
  /** The draft is another thread's answer (replan memory): a literal this run never knew is untrusted. */
  remembered: boolean;
}

/**
 * Shorter values are too common to mean anything ("yes", "EUR", "10"): matching them would ask a
 * person about every replan. Decision 0013 has the trade-off.
 */
export const MIN_TRACED_LENGTH = 4;

/** Findings on the arguments of one side-effecting use a version adds; `fedBy` says which new step feeds a key. */
export function taintFindings(
  stepId: string,
  use: ToolUse,
  sideEffects: string[],
  baseline: CapabilityBaseline,
  taint: Taint,
  fedBy: (key: string) => string | undefined,
): CapabilityFinding[] {
  const findings: CapabilityFinding[] = [];
  const approved = baseline.inputs.get(use.tool);
  for (const key of use.inputs) {
    const from = taint.keys.get(key);
    if (from === undefined) continue;
    // The same tool reading the same key in an earlier version is a flow a plan already had,
    // as long as what produces the key is what produced it then.
    const feed = approved?.has(key) ? fedBy(key) : from;
    if (feed === undefined) continue;
    const detail = `step "${stepId}" would pass fact "${key}" (${feed}) to ${shown(use.tool)}`;
    findings.push({ kind: "untrusted_input", stepId, tool: use.tool, sideEffects, detail });
  }
  for (const value of new Set(literals(use))) {
    const found = traced(value, knownOf(baseline), taint);
    if (found === undefined) continue;
    const text = JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
    const detail = `step "${stepId}" would call ${shown(use.tool)} with ${text}, ${found}`;
    findings.push({ kind: "untrusted_argument", stepId, tool: use.tool, sideEffects, detail });
  }
  return findings;
}

/**
 * A side-effecting call whose arguments are chosen when it runs (a model inside createAgent picks
 * them, not the plan): the literals it passes that untrusted text holds and that the run knew
 * nowhere — `known` being the goal and the arguments of the plan versions a person or the guard let
 * through (`capabilityBaseline(...).known`).
 */
export function callFindings(
  call: { stepId: string; tool: string; args: Readonly<Record<string, unknown>>; sideEffects: string[] },
  known: readonly string[],
  texts: readonly TaintedText[],
): CapabilityFinding[] {
  const use: ToolUse = { stepId: call.stepId, tool: call.tool, main: true, args: call.args, inputs: [] };
  const baseline: CapabilityBaseline = { tools: new Set(), inputs: new Map(), known };
  const taint: Taint = { keys: new Map(), texts, remembered: false };
  return taintFindings(call.stepId, use, call.sideEffects, baseline, taint, () => undefined);
}

/** Text the run knew, asked whether a value occurs in any of it (an index, instead of the list). */
export interface KnownText {
  knows(value: string): boolean;
}

/** What a baseline knows, as `traced` reads it: its index when it has one, so its list is never built. */
export const knownOf = (baseline: CapabilityBaseline): readonly string[] | KnownText =>
  baseline.knows ? { knows: baseline.knows } : baseline.known;

/**
 * Where a value occurs in untrusted text and nowhere the run knew before (goal, inputs, a person's
 * words, earlier arguments) — as the reviewer reads it — or undefined.
 */
export function traced(value: string, known: readonly string[] | KnownText, taint: Taint): string | undefined {
  const v = value.trim();
  if (v.length < MIN_TRACED_LENGTH) return undefined;
  if ("knows" in known ? known.knows(v) : known.some((k) => occurs(v, k))) return undefined;
  const found = taint.find ? taint.find(v) : taint.texts.find((t) => occurs(v, t.text));
  if (found) return `a value found in ${found.source}`;
  return taint.remembered ? "a value from replan memory that this run never saw" : undefined;
}

/**
 * What a run's failures told the planner: tools' error messages and their evidence, and the
 * reasons of decisions (which quote them, and reach the planner as its trigger). A person's
 * decisions are their own words, not a tool's.
 */
export function failureTexts(
  runs: Iterable<{ error?: Pick<ErrorInfo, "message" | "evidence"> | undefined }>,
  decisions: readonly Pick<Decision, "reason" | "evidence" | "by">[],
): TaintedText[] {
  const texts = new Set<string>();
  for (const run of runs) {
    if (!run.error) continue;
    texts.add(run.error.message);
    for (const leaf of leaves(run.error.evidence)) texts.add(leaf);
  }
  for (const d of decisions) {
    if (d.by === "person") continue;
    texts.add(d.reason);
    if (d.evidence !== undefined) texts.add(d.evidence);
  }
  return [...texts].map((text) => ({ text, source: "a tool's error message" }));
}

/**
 * What a step may call: its tool or agent (`agent:NAME`), its fallback, its compensation, the tool that
 * validates an agent's answer.
 */
export interface ToolUse {
  stepId: string;
  tool: string;
  /** The step's own executor (its declared side effects are this one's). */
  main: boolean;
  /** How the step calls it, when not as its own executor. */
  as?: "fallback" | "validation" | "compensation";
  args: Readonly<Record<string, unknown>>;
  inputs: readonly string[];
  /** Identifying words of an agent step's goal: its instructions are its arguments. */
  words?: readonly string[];
}

/** The calls a step may make; none for a person's step. */
export function uses(step: Step): ToolUse[] {
  if (step.human) return [];
  const out: ToolUse[] = [];
  const inputs = step.inputs ?? [];
  const executor = executorOf(step);
  if (executor) {
    const use: ToolUse = { stepId: step.id, tool: executor, main: true, args: step.args ?? {}, inputs };
    if (step.agent !== undefined) use.words = identifying(step.goal);
    out.push(use);
  }
  if (step.fallback)
    out.push({
      stepId: step.id,
      tool: step.fallback.tool,
      main: false,
      as: "fallback",
      args: step.fallback.args ?? {},
      inputs,
    });
  // A step's undo is a side-effecting call of its own (docs/decisions/0039-compensation.md).
  if (step.compensate)
    out.push({
      stepId: step.id,
      tool: step.compensate.tool,
      main: false,
      as: "compensation",
      args: step.compensate.args ?? {},
      inputs: step.compensate.inputs ?? [],
    });
  if (step.validate)
    out.push({
      stepId: step.id,
      tool: step.validate.tool,
      main: false,
      as: "validation",
      args: step.validate.args ?? {},
      inputs: [],
    });
  return out;
}

/** What a use passes as literals: its arguments' values, and an agent's identifying goal words. */
export function literals(use: ToolUse): string[] {
  return [...leaves(use.args), ...(use.words ?? [])];
}

/**
 * Words of free text that name something — an account, an amount, an id, an address: a digit, `@`
 * or `/` in 4+ characters. Plain words ("supplier", "invoice") would match most tool output.
 */
export function identifying(text: string): string[] {
  const words = text.split(/\s+/).map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ""));
  return words.filter((w) => w.length >= MIN_TRACED_LENGTH && /[\p{N}@/]/u.test(w));
}

/** How a reviewer reads an executor's name: `agent "NAME"` for an agent, else the tool's name. */
export function shown(executor: string): string {
  return executor.startsWith("agent:") ? `agent "${executor.slice("agent:".length)}"` : executor;
}

/**
 * Scalar values inside arguments, as text (booleans and null carry no payload worth tracing). An
 * object met twice (a cycle, a shared branch) is read once, so no value's shape can make this slow.
 */
export function leaves(value: unknown, seen: WeakSet<object> = new WeakSet()): string[] {
  if (typeof value === "string") return [value];
  if (typeof value === "number" || typeof value === "bigint") return [String(value)];
  if (!value || typeof value !== "object" || seen.has(value)) return [];
  seen.add(value);
  const inner = Array.isArray(value) ? (value as unknown[]) : Object.values(value);
  return inner.flatMap((v) => leaves(v, seen));
}
