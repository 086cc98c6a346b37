/** A deviation: anything the executor saw that is not "the step succeeded". Plain data. */
import { z } from "zod";
import { type Plan } from "../../plan/schema/plan.js";
import { ErrorInfoSchema, type ErrorInfo, type Fact } from "../../plan/schema/run.js";
import { capText, toJsonSafe } from "../../plan/json-safe.js";
import { usableRetryAfter } from "../../errors.js";

/** What every deviation carries, whatever its kind. */
const base = {
  stepId: z.string().optional(),
  /** Attempts made on the step so far (including the one that deviated). */
  attempt: z.number(),
  message: z.string(),
  error: ErrorInfoSchema.optional(),
};

/**
 * A deviation, a union keyed on `kind`: each kind carries the fields its evidence has. The state
 * channel checks writes against it (unknown keys pass, as from a checkpoint of an earlier version).
 */
export const DeviationSchema = z.discriminatedUnion("kind", [
  /** The tool threw (`error` says what), or timed out. */
  z.object({ kind: z.literal("error"), ...base }),
  z.object({ kind: z.literal("timeout"), ...base }),
  /** The tool returned, but its success signal is false or a produced field is missing. */
  z.object({ kind: z.literal("signal_unmet"), ...base, expression: z.string().optional() }),
  /** An input fact is not trusted, or a precondition is false. */
  z.object({
    kind: z.literal("precondition"),
    ...base,
    /** Facts the precondition needed that are missing or not trusted. */
    missing: z.array(z.string()).optional(),
    /** The expression that was false. */
    expression: z.string().optional(),
    /** Facts the false expression read (their producers may be re-run to fix it). */
    facts: z.array(z.string()).optional(),
  }),
  /** An assumption check turned false after a step. */
  z.object({
    kind: z.literal("assumption_broken"),
    ...base,
    /** The first assumption found false. */
    assumptionId: z.string(),
    /** Every assumption found false at once (several → a global replan). */
    assumptionIds: z.array(z.string()).optional(),
    /** The watcher whose check found it false, with what it saw (`error.evidence`): the assumption drifted. */
    watch: z.object({ tool: z.string() }).optional(),
  }),
  /** Inputs older than the step's `freshFor` allows when it was to start (docs/decisions/0041-evidence-freshness-and-drift.md). */
  z.object({
    kind: z.literal("stale_evidence"),
    ...base,
    /** The stale facts, each with its age and bound in ms and the step that produced it. */
    stale: z.array(z.object({ key: z.string(), ageMs: z.number(), freshForMs: z.number(), producedBy: z.string() })),
  }),
  z.object({ kind: z.literal("budget"), ...base }),
  z.object({ kind: z.literal("scope_change"), ...base }),
  /** The tool returned something the run cannot store (not JSON, too large, too deep). */
  z.object({ kind: z.literal("output_rejected"), ...base }),
  /** A step that committed a side effect would run again with a changed operation. */
  z.object({
    kind: z.literal("side_effect_changed"),
    ...base,
    /** The key already committed, and the key of the changed operation. */
    committedKey: z.string(),
    proposedKey: z.string(),
  }),
  /** A side-effecting call's outcome is unknown and nothing settled it (docs/decisions/0038-effect-journal.md). */
  z.object({
    kind: z.literal("effect_in_doubt"),
    ...base,
    /** The operation's key, and the tool called under it. */
    key: z.string(),
    tool: z.string(),
    /**
     * The journal attempt of the intent in doubt; on a fork it may come from another branch of the
     * thread, numbered above the step's own attempts (docs/decisions/0038-effect-journal.md).
     */
    journalAttempt: z.number().int().min(0).optional(),
  }),
]);

/**
 * Something that went differently from the plan: a failed attempt, an unmet signal, a broken assumption, a
 * scope change, ….
 */
export type Deviation = z.infer<typeof DeviationSchema>;
/** The kinds of deviation. */
export type DeviationKind = Deviation["kind"];
/** A deviation as a check reports it, before the step and attempt are known (each kind keeps its fields). */
export type DeviationDraft = Deviation extends infer D
  ? D extends Deviation
    ? Omit<D, "stepId" | "attempt">
    : never
  : never;
/** One kind of deviation. */
export type DeviationOf<K extends DeviationKind> = Extract<Deviation, { kind: K }>;

/** The assumption a deviation names: an assumption check's, or the one an `AssumptionBrokenError` carries. */
export function namedAssumption(d: Deviation): string | undefined {
  return d.kind === "assumption_broken" ? d.assumptionId : d.error?.assumptionId;
}

/**
 * The assumptions of the steps that produce the facts a failed precondition or missing input names
 * (the producer of a recorded fact, else the step of the plan that would produce it).
 */
export function producerAssumptions(plan: Plan, facts: Readonly<Record<string, Fact>>, d: Deviation): string[] {
  const read = d.kind === "precondition" ? [...(d.missing ?? []), ...(d.facts ?? [])] : [];
  return [...new Set(read)].flatMap((key) => {
    const producer = facts[key]?.producedBy ?? plan.steps.find((s) => s.produces?.includes(key))?.id;
    return plan.steps.find((s) => s.id === producer)?.assumptions ?? [];
  });
}

/**
 * Reads what a thrown value says about itself. Tools throw anything: `Error`s, DOMExceptions, plain
 * objects from HTTP clients, strings. Recognition is structural (fields, not class identity), so a
 * second copy of a package or a thrown plain object is read the same way; reading never throws.
 * The record is what the checkpoint stores, so it is JSON within the limits whatever was thrown:
 * texts cut at `LIMITS.maxErrorMessageLength`, `evidence` made JSON (`toJsonSafe`), a
 * `retryAfterMs` that names no usable wait left out (docs/decisions/0026-robust-error-records.md).
 */
export function errorInfo(error: unknown): ErrorInfo {
  if (error === null || (typeof error !== "object" && typeof error !== "function")) {
    return { name: "Error", message: capText(primitiveMessage(error)) };
  }
  if (typeof error === "function") {
    return { name: "Error", message: `a thrown function${error.name ? ` ${error.name}` : ""}` };
  }
  try {
    return readError(error);
  } catch {
    // A Proxy or a getter that throws: nothing can be read, but the run must carry on.
    return { name: "Error", message: "a thrown value that cannot be read" };
  }
}

function readError(error: object): ErrorInfo {
  const e = error as Record<string, unknown>;
  const message = typeof e.message === "string" ? e.message : objectPreview(error);
  const name = recognisedName(e, message) ?? nonEmpty(e.name) ?? "Error";
  const info: ErrorInfo = { name: capText(name, MAX_NAME), message: capText(message) };
  const status = httpStatus(e);
  if (status !== undefined) info.status = status;
  // DOMException carries a numeric legacy `code` (23 for TimeoutError): only string codes name a cause.
  const code = typeof e.code === "string" ? e.code : causeCode(e.cause);
  if (code !== undefined) info.code = capText(code, MAX_NAME);
  const retryAfterMs = usableRetryAfter(e.retryAfterMs);
  if (retryAfterMs !== undefined) info.retryAfterMs = retryAfterMs;
  if (typeof e.assumptionId === "string") info.assumptionId = capText(e.assumptionId, MAX_NAME);
  if (e.evidence !== undefined) info.evidence = toJsonSafe(e.evidence);
  return info;
}

/** Names, codes and assumption ids are short; a longer one is cut. */
const MAX_NAME = 200;

/** The message @langchain/core gives a ToolInputParsingException (tools/index.js, `StructuredTool.call`). */
const TOOL_INPUT_MESSAGE = "Received tool input did not match expected schema";

/**
 * LangChain's parser errors and zod's are recognised by the fields they carry, never by class:
 * a second copy of a package, a minified build and a plain object with the same fields read the
 * same, and a class only named like one of them is not taken for it. @langchain/core 1.4 throws
 * both parser errors with `name` "Error", so their own fields tell them apart:
 * - OutputParserException: LangChain's code `OUTPUT_PARSING_FAILURE`, or (a copy that sets no code)
 *   the three fields the class declares, `llmOutput`, `observation` and a boolean `sendToLLM`;
 * - ToolInputParsingException: that name, or the message @langchain/core writes together with the
 *   `output` string it carries (an `output` field alone is any tool's);
 * - zod v4: `ZodError` (classic) or `$ZodError` (core), with an `issues` array.
 */
function recognisedName(
  e: Record<string, unknown>,
  message: string,
): "ToolInputParsingException" | "ZodError" | "OutputParserException" | undefined {
  const parserFields = "llmOutput" in e && "observation" in e && typeof e.sendToLLM === "boolean";
  if (e.lc_error_code === "OUTPUT_PARSING_FAILURE" || parserFields) return "OutputParserException";
  if (
    e.name === "ToolInputParsingException" ||
    (typeof e.output === "string" && message.startsWith(TOOL_INPUT_MESSAGE))
  )
    return "ToolInputParsingException";
  if (Array.isArray(e.issues) && (e.name === "ZodError" || e.name === "$ZodError")) return "ZodError";
  return undefined;
}

/**
 * HTTP clients put the status in different places (fetch wrappers: `status`; Node's http and got:
 * `statusCode`; axios: `response.status`; some SDKs `response.statusCode`), sometimes as a string.
 * The first field holding a valid status (100–599) wins; anything else is not trusted as one.
 */
function httpStatus(e: Record<string, unknown>): number | undefined {
  const response = typeof e.response === "object" && e.response !== null ? (e.response as Record<string, unknown>) : {};
  for (const candidate of [e.status, e.statusCode, response.status, response.statusCode]) {
    const status = typeof candidate === "string" && /^\d{3}$/.test(candidate) ? Number(candidate) : candidate;
    if (typeof status === "number" && Number.isInteger(status) && status >= 100 && status <= 599) return status;
  }
  return undefined;
}

function causeCode(cause: unknown): string | undefined {
  if (cause && typeof cause === "object" && typeof (cause as { code?: unknown }).code === "string") {
    return (cause as { code: string }).code;
  }
  return undefined;
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

function primitiveMessage(value: unknown): string {
  // String() handles symbols and BigInt, which template literals and JSON.stringify reject.
  return typeof value === "string" ? value : String(value);
}

const MAX_PREVIEW = 200;

/** A thrown object without a message: its JSON, shortened; never "[object Object]", and never its class's name. */
function objectPreview(error: object): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(error);
  } catch {
    text = undefined;
  }
  if (text === undefined || text === "{}") {
    const keys = Object.keys(error);
    text = `a thrown object with ${keys.length > 0 ? `keys ${keys.join(", ")}` : "no keys"}`;
  }
  return text.length > MAX_PREVIEW ? `${text.slice(0, MAX_PREVIEW - 3)}...` : text;
}
