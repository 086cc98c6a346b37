/**
 * Evidence rules: which failure class a deviation belongs to. Rules are data with ids and are
 * tried in order; the first match names the class (docs/architecture.md "The ladder").
 */
import type { FailureClass } from "../../plan/schema/decision.js";
import type { Deviation } from "./deviation.js";

/** A rule naming a deviation's failure class from its evidence (an HTTP status, an error name, …). */
export interface EvidenceRule {
  id: string;
  failureClass: FailureClass;
  description: string;
  matches: (deviation: Deviation, about?: EvidenceContext) => boolean;
}

/** What the step tells about its deviation, beside the deviation itself. */
export interface EvidenceContext {
  /** The attempt was a model's or an agent's answer (an agent step, not its fallback tool). */
  agentAnswer?: boolean;
}

/** Node network errors that usually clear on their own. */
export const TRANSIENT_NETWORK_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ETIMEDOUT",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** `errorInfo` names every argument error one of these, whatever its class says (see deviation.ts). */
const ARGUMENT_ERROR_NAMES: ReadonlySet<string> = new Set(["ToolInputParsingException", "ZodError"]);
const ABORT_ERROR_NAMES: ReadonlySet<string> = new Set(["TimeoutError", "AbortError"]);
/** What a model's answer that does not parse throws: LangChain's output parsers, or `JSON.parse` (see deviation.ts). */
const PARSE_ERROR_NAMES: ReadonlySet<string> = new Set(["OutputParserException", "SyntaxError"]);

const status = (d: Deviation) => d.error?.status;

/**
 * The JSON-RPC code of an MCP call's error, as `@langchain/mcp-adapters` throws it (a
 * ToolException "Error calling tool NAME: McpError: MCP error CODE: …"), or undefined.
 */
function mcpCode(d: Deviation): number | undefined {
  if (d.kind !== "error" || d.error?.name !== "ToolException") return undefined;
  const code = /^Error calling tool [^:]*: McpError: MCP error (-\d+):/.exec(d.error.message)?.[1];
  return code === undefined ? undefined : Number(code);
}

/** The text of an MCP tool's error result (`isError: true`), as the adapter throws it, or undefined. */
function mcpToolError(d: Deviation): string | undefined {
  if (d.kind !== "error" || d.error?.name !== "ToolException") return undefined;
  return /^MCP tool '[^']*' on server '[^']*' returned an error: ([\s\S]*)$/.exec(d.error.message)?.[1];
}

/** What an error result says when the outside world failed rather than the call. */
const PASSING_TROUBLE =
  /\b(fetch failed|timed? ?out|timeout|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|rate.?limit|too many requests|429|50[0-9]|unavailable|try again)\b/i;
const isError = (d: Deviation) => d.kind === "error";

/**
 * The name an external step's error carries when the calling agent gave it no class
 * (policy/attempt/external.ts): its message is the evidence.
 */
export const EXTERNAL_ERROR_NAME = "ExternalStepError";
/** The message of an external step's error submitted without a class, or undefined. */
const externalMessage = (d: Deviation) =>
  isError(d) && d.error?.name === EXTERNAL_ERROR_NAME ? d.error.message : undefined;

/** The evidence rules, in the order they are tried: each names a failure class from what an error shows. */
export const EVIDENCE_RULES: readonly EvidenceRule[] = [
  {
    id: "transient.timeout",
    failureClass: "transient",
    description: "the step exceeded its timeoutMs",
    matches: (d) => d.kind === "timeout",
  },
  {
    id: "assumption.error",
    failureClass: "assumption_broken",
    description: "the tool threw AssumptionBrokenError",
    matches: (d) => isError(d) && d.error?.name === "AssumptionBrokenError",
  },
  {
    id: "assumption.watch-false",
    failureClass: "assumption_broken",
    description: "an assumption's watcher saw it false before a step resting on it started",
    matches: (d) => d.kind === "assumption_broken" && d.watch !== undefined,
  },
  {
    id: "assumption.check-false",
    failureClass: "assumption_broken",
    description: "an assumption check turned false",
    matches: (d) => d.kind === "assumption_broken",
  },
  {
    id: "transient.error",
    failureClass: "transient",
    description: "the tool threw TransientError",
    matches: (d) => isError(d) && d.error?.name === "TransientError",
  },
  {
    id: "deterministic.error",
    failureClass: "deterministic",
    description: "the tool threw PermanentError",
    matches: (d) => isError(d) && d.error?.name === "PermanentError",
  },
  {
    id: "transient.http-429",
    failureClass: "transient",
    description: "HTTP 429 Too Many Requests",
    matches: (d) => isError(d) && status(d) === 429,
  },
  {
    id: "transient.http-408-425",
    failureClass: "transient",
    description: "HTTP 408 Request Timeout or 425 Too Early",
    matches: (d) => isError(d) && (status(d) === 408 || status(d) === 425),
  },
  {
    id: "transient.http-5xx",
    failureClass: "transient",
    description: "HTTP 5xx server error",
    matches: (d) => isError(d) && (status(d) ?? 0) >= 500 && (status(d) ?? 0) <= 599,
  },
  {
    id: "deterministic.http-4xx",
    failureClass: "deterministic",
    description: "HTTP 4xx client error other than 408, 425 and 429",
    matches: (d) => isError(d) && (status(d) ?? 0) >= 400 && (status(d) ?? 0) <= 499,
  },
  {
    id: "transient.network",
    failureClass: "transient",
    description: "a Node network error such as ECONNRESET, ETIMEDOUT or ECONNREFUSED",
    matches: (d) => isError(d) && d.error?.code !== undefined && TRANSIENT_NETWORK_CODES.has(d.error.code),
  },
  {
    // What `AbortSignal.timeout()` and an aborted `fetch` throw (DOMException); a step timeout of our
    // own is `transient.timeout`. An abort from the run's own signal stops the graph before any retry.
    id: "transient.abort-timeout",
    failureClass: "transient",
    description: "the call was aborted or timed out (DOMException TimeoutError or AbortError)",
    matches: (d) => isError(d) && d.error !== undefined && ABORT_ERROR_NAMES.has(d.error.name),
  },
  {
    id: "transient.mcp-timeout",
    failureClass: "transient",
    description: "an MCP request timed out (JSON-RPC -32001)",
    matches: (d) => mcpCode(d) === -32001,
  },
  {
    id: "transient.mcp-connection",
    failureClass: "transient",
    description: "the MCP server's connection closed (JSON-RPC -32000)",
    matches: (d) => mcpCode(d) === -32000,
  },
  {
    id: "transient.mcp-internal",
    failureClass: "transient",
    description: "the MCP server failed inside (JSON-RPC -32603)",
    matches: (d) => mcpCode(d) === -32603,
  },
  {
    id: "deterministic.mcp-invalid",
    failureClass: "deterministic",
    description: "the MCP server refused the call: invalid params, request or method (JSON-RPC -32602, -32600, -32601)",
    matches: (d) => [-32602, -32600, -32601].includes(mcpCode(d) ?? 0),
  },
  {
    id: "transient.mcp-tool-error",
    failureClass: "transient",
    description:
      "an MCP tool's error result says the outside world failed (fetch failed, timeout, 429, 5xx, unavailable)",
    matches: (d) => PASSING_TROUBLE.test(mcpToolError(d) ?? ""),
  },
  {
    id: "deterministic.mcp-tool-error",
    failureClass: "deterministic",
    description: "any other MCP tool error result (isError: true)",
    matches: (d) => mcpToolError(d) !== undefined,
  },
  {
    // The same reading as an MCP tool's error text: the calling agent says what it met, in words.
    id: "transient.external-message",
    failureClass: "transient",
    description:
      "an external step's error without a class says the outside world failed (fetch failed, timeout, 429, 5xx, unavailable)",
    matches: (d) => PASSING_TROUBLE.test(externalMessage(d) ?? ""),
  },
  {
    id: "deterministic.invalid-arguments",
    failureClass: "deterministic",
    description: "the tool rejected its arguments (schema error)",
    matches: (d) => isError(d) && d.error !== undefined && ARGUMENT_ERROR_NAMES.has(d.error.name),
  },
  {
    // A model that answered in a shape that does not parse can answer again, told why, as after a
    // failed validation (docs/decisions/0021-agent-steps.md). A tool's SyntaxError says nothing of
    // the kind, so only an agent step's answer is read this way.
    id: "unmet.unparsable-answer",
    failureClass: "success_signal_unmet",
    description: "an agent step's answer does not parse (OutputParserException, SyntaxError)",
    matches: (d, about) =>
      about?.agentAnswer === true && isError(d) && d.error !== undefined && PARSE_ERROR_NAMES.has(d.error.name),
  },
  {
    id: "output.rejected",
    failureClass: "deterministic",
    description: "the tool's output is not storable JSON or exceeds the fact size or depth limit",
    matches: (d) => d.kind === "output_rejected",
  },
  {
    id: "unmet.signal",
    failureClass: "success_signal_unmet",
    description: "the tool returned but its success signal is false",
    matches: (d) => d.kind === "signal_unmet",
  },
  {
    id: "precondition.false",
    failureClass: "precondition_failed",
    description: "a precondition is false or a needed fact is missing",
    matches: (d) => d.kind === "precondition",
  },
  {
    id: "evidence.stale-input",
    failureClass: "precondition_failed",
    description: "an input is older than the step's freshFor allows",
    matches: (d) => d.kind === "stale_evidence",
  },
  {
    id: "budget.max-cost",
    failureClass: "budget_exhausted",
    description: "the step's cost would exceed budget.maxCost",
    matches: (d) => d.kind === "budget",
  },
  {
    id: "scope.change-requested",
    failureClass: "scope_changed",
    description: "the user added or changed requirements",
    matches: (d) => d.kind === "scope_change",
  },
  {
    id: "unknown.unclassified",
    failureClass: "unknown",
    description: "no rule recognised the failure",
    matches: () => true,
  },
];

/** The first evidence rule that matches a deviation (the last matches everything). */
export function classifyEvidence(deviation: Deviation, about?: EvidenceContext): EvidenceRule {
  // The last rule matches everything, so find always succeeds.
  return EVIDENCE_RULES.find((rule) => rule.matches(deviation, about)) ?? EVIDENCE_RULES[EVIDENCE_RULES.length - 1]!;
}
