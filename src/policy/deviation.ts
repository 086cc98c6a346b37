/** A deviation: anything the executor saw that is not "the step succeeded". Plain data. */
import { ToolInputParsingException } from "@langchain/core/tools";
import { z } from "zod";
import type { ErrorInfo } from "../plan/schema.js";

export type DeviationKind =
  | "error"
  | "timeout"
  | "signal_unmet"
  | "precondition"
  | "assumption_broken"
  | "budget"
  | "scope_change"
  /** The tool returned something the run cannot store (not JSON, too large, too deep). */
  | "output_rejected"
  /** A step that committed a side effect would run again with a changed operation. */
  | "side_effect_changed";

export interface Deviation {
  kind: DeviationKind;
  stepId?: string;
  /** Attempts made on the step so far (including the one that deviated). */
  attempt: number;
  message: string;
  error?: ErrorInfo;
  /** The assumption named by the evidence (an `AssumptionBrokenError` or a failed check). */
  assumptionId?: string;
  /** Every assumption found false at once (several → a global replan). */
  assumptionIds?: string[];
  /** Facts a precondition needed that are missing or not trusted. */
  missing?: string[];
  /** The expression that was false. */
  expression?: string;
  /** Facts the false expression read (their producers may be re-run to fix it). */
  facts?: string[];
  /** For `side_effect_changed`: the key already committed, and the key of the changed operation. */
  committedKey?: string;
  proposedKey?: string;
}

/**
 * Reads what a thrown value says about itself. Tools throw anything: `Error`s, DOMExceptions, plain
 * objects from HTTP clients, strings. Recognition is structural (fields, not class identity), so a
 * second copy of a package or a thrown plain object is read the same way; reading never throws.
 */
export function errorInfo(error: unknown): ErrorInfo {
  if (error === null || (typeof error !== "object" && typeof error !== "function")) {
    return { name: "Error", message: primitiveMessage(error) };
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
  const info: ErrorInfo = { name: argumentErrorName(error, message) ?? nonEmpty(e.name) ?? "Error", message };
  const status = httpStatus(e);
  if (status !== undefined) info.status = status;
  // DOMException carries a numeric legacy `code` (23 for TimeoutError): only string codes name a cause.
  const code = typeof e.code === "string" ? e.code : causeCode(e.cause);
  if (code !== undefined) info.code = code;
  if (typeof e.retryAfterMs === "number") info.retryAfterMs = e.retryAfterMs;
  if (typeof e.assumptionId === "string") info.assumptionId = e.assumptionId;
  if (e.evidence !== undefined) info.evidence = e.evidence;
  return info;
}

/** The message @langchain/core gives a ToolInputParsingException (tools/index.js, `StructuredTool.call`). */
const TOOL_INPUT_MESSAGE = "Received tool input did not match expected schema";

/**
 * @langchain/core 1.4 throws ToolInputParsingException with `name` "Error", so the class is what
 * identifies it: the real class, or — for another copy of the package, or a minified build — its
 * constructor name, or the message it writes together with the `output` string it carries.
 * zod v4 throws ZodError (classic) or $ZodError (core): both carry an `issues` array.
 */
function argumentErrorName(error: object, message: string): "ToolInputParsingException" | "ZodError" | undefined {
  const e = error as Record<string, unknown>;
  const constructorName = nonEmpty((error as { constructor?: { name?: unknown } }).constructor?.name);
  if (
    error instanceof ToolInputParsingException ||
    constructorName === "ToolInputParsingException" ||
    e.name === "ToolInputParsingException" ||
    (typeof e.output === "string" && message.startsWith(TOOL_INPUT_MESSAGE))
  ) {
    return "ToolInputParsingException";
  }
  const zodNamed = [e.name, constructorName].some((name) => name === "ZodError" || name === "$ZodError");
  if (error instanceof z.core.$ZodError || (Array.isArray(e.issues) && zodNamed)) {
    return "ZodError";
  }
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

/** A thrown object without a message: its JSON, shortened; never "[object Object]". */
function objectPreview(error: object): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(error);
  } catch {
    text = undefined;
  }
  if (text === undefined || text === "{}") {
    const kind = nonEmpty((error as { constructor?: { name?: unknown } }).constructor?.name) ?? "object";
    const keys = Object.keys(error);
    text = `a thrown ${kind} with ${keys.length > 0 ? `keys ${keys.join(", ")}` : "no keys"}`;
  }
  return text.length > MAX_PREVIEW ? `${text.slice(0, MAX_PREVIEW - 3)}...` : text;
}
