/** Checks a resume value against the schema and the options an interrupt offered. Pure. */
import { ResumeValueSchema, type ResumeAction } from "./schema.js";

const KNOWN_ACTIONS: ReadonlySet<string> = new Set(ResumeValueSchema.options.map((o) => o.shape.action.value));

/** Why `raw` cannot answer an interrupt that offers `options`, or undefined when it can. */
export function resumeProblem(raw: unknown, options: readonly ResumeAction[]): string | undefined {
  const action = raw !== null && typeof raw === "object" ? (raw as { action?: unknown }).action : undefined;
  if (typeof action !== "string" || !KNOWN_ACTIONS.has(action)) {
    const addressed = raw !== null && typeof raw === "object" && action === undefined && Object.keys(raw).length > 0 ? ` (a map of interrupt ids? ${Object.keys(raw).slice(0, 3).join(", ")} is not the pending interrupt)` : "";
    return `invalid resume value: unknown action ${JSON.stringify(action ?? null)}${addressed}; choose one of: ${options.join(", ")} (as { action: "..." })`;
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
