/** Checks a resume value against the schema and the options an interrupt offered. Pure. */
import { describeValue, nearest } from "./nearest.js";
import { ResumeValueSchema, type ResumeAction } from "./schema.js";

const KNOWN_ACTIONS: ReadonlySet<string> = new Set(ResumeValueSchema.options.map((o) => o.shape.action.value));

/** Why `raw` cannot answer an interrupt that offers `options`, or undefined when it can. */
export function resumeProblem(raw: unknown, options: readonly ResumeAction[]): string | undefined {
  const choose = `choose one of: ${options.join(", ")} (as { action: "..." })`;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return `invalid resume value: expected an object like { action: "${options[0] ?? "approve"}" }, received ${describeValue(raw)}; ${choose}`;
  }
  const action = (raw as { action?: unknown }).action;
  if (action === undefined) {
    const keys = Object.keys(raw);
    const addressed = keys.length > 0 ? ` (a map of interrupt ids? ${keys.slice(0, 3).join(", ")} is not the pending interrupt)` : "";
    return `invalid resume value: the object has no action${addressed}; ${choose}`;
  }
  if (typeof action !== "string") return `invalid resume value: action must be a string, received ${describeValue(action)}; ${choose}`;
  if (!KNOWN_ACTIONS.has(action)) {
    const guess = nearest(action, [...KNOWN_ACTIONS]);
    return `invalid resume value: unknown action ${JSON.stringify(action)}${guess ? ` (did you mean "${guess}"?)` : ""}; ${choose}`;
  }
  const parsed = ResumeValueSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
    return `invalid resume value: ${where}${issue?.message ?? "malformed"}; expected one of ${options.map((o) => `{ action: "${o}" }`).join(", ")}`;
  }
  if (!options.includes(parsed.data.action)) return `action "${parsed.data.action}" is not available here; choose one of: ${options.join(", ")}`;
  return undefined;
}
