/** Checks a resume value against the schema and the options an interrupt offered. Pure. */
import { describeValue, nearest } from "./nearest.js";
import { ResumeValueSchema, type ResumeAction } from "./schema/interrupts.js";

const KNOWN_ACTIONS: ReadonlySet<string> = new Set(ResumeValueSchema.options.map((o) => o.shape.action.value));
/** Characters of a received string quoted back in a message: enough to recognise it, never a flood. */
const MAX_QUOTED = 64;

/** Why `raw` cannot answer an interrupt that offers `options`, or undefined when it can. */
export function resumeProblem(raw: unknown, options: readonly ResumeAction[]): string | undefined {
  const choose = `choose one of: ${options.join(", ")} (as { action: "..." })`;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return (
      `invalid resume value: expected an object like { action: "${options[0] ?? "approve"}" }, received ` +
      `${describeValue(raw)}; ${choose}`
    );
  }
  const action = (raw as { action?: unknown }).action;
  if (action === undefined) {
    const keys = Object.keys(raw);
    const shownKeys = keys.slice(0, 3).map((k) => k.slice(0, MAX_QUOTED));
    const addressed =
      keys.length > 0 ? ` (a map of interrupt ids? ${shownKeys.join(", ")} is not the pending interrupt)` : "";
    return `invalid resume value: the object has no action${addressed}; ${choose}`;
  }
  if (typeof action !== "string")
    return `invalid resume value: action must be a string, received ${describeValue(action)}; ${choose}`;
  if (!KNOWN_ACTIONS.has(action)) {
    return `invalid resume value: unknown action ${quote(action)}${didYouMean(action, options)}; ${choose}`;
  }
  const parsed = ResumeValueSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.length === 1 ? String(issue.path[0]) : undefined;
    // A field left out is named, with what goes in it: the value sent is not what is expected.
    if (field !== undefined && !Object.hasOwn(raw, field)) return missingField(action, field);
    const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
    return (
      `invalid resume value: ${where}${issue?.message ?? "malformed"}; expected one of ` +
      `${options.map((o) => `{ action: "${o}" }`).join(", ")}`
    );
  }
  if (!options.includes(parsed.data.action))
    return `action "${parsed.data.action}" is not available here; choose one of: ${options.join(", ")}`;
  return undefined;
}

/** What a field of an answer holds, where the name alone does not say. */
const FIELD_MEANS: Readonly<Record<string, string>> = {
  "happened.output": "what the call returned, recorded as its result",
  "complete.output": "the step's result",
  "provide.facts": "the facts the step was to produce",
};

function missingField(action: string, field: string): string {
  const means = FIELD_MEANS[`${action}.${field}`];
  return (
    `invalid resume value: { action: "${action}" } needs ${field}${means ? ` (${means})` : ""}, which is missing; ` +
    `send { action: "${action}", ${field}: ... }`
  );
}

function quote(text: string): string {
  return JSON.stringify(text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED - 3)}...` : text);
}

/**
 * The nearest action, preferring those offered here (the ones that can work); a known action
 * that is not offered is still named, so "aprove" at an escalation is not left a mystery.
 * Actions are short, so a longer word cannot be close and is not compared (edit distance is
 * quadratic in its length).
 */
function didYouMean(action: string, options: readonly ResumeAction[]): string {
  if (action.length > MAX_QUOTED) return "";
  const offered = nearest(action, options);
  if (offered) return ` (did you mean "${offered}"?)`;
  const known = nearest(action, [...KNOWN_ACTIONS]);
  return known ? ` (did you mean "${known}"? it is not available here)` : "";
}
