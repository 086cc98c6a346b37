/**
 * How the errors of tools from MCP servers (@langchain/mcp-adapters) are classified: a request
 * timeout, a closed connection and a tool's error result that says the outside world failed are
 * transient; invalid params, an unknown method and any other error result are deterministic.
 * The messages are the ones the adapter throws (measured against @modelcontextprotocol/server-everything).
 */
import { describe, expect, it } from "vitest";
import { classifyEvidence } from "../../src/policy/index.js";
import { errorInfo } from "../../src/policy/ladder/deviation.js";

/** The adapter's own error class (not exported by @langchain/mcp-adapters): an Error named "ToolException". */
class ToolException extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolException";
  }
}

const evidenceOf = (thrown: unknown) =>
  classifyEvidence({ kind: "error", attempt: 1, message: "m", error: errorInfo(thrown) });

describe("MCP errors", () => {
  it.each([
    [
      "Error calling tool trigger-long-running-operation: McpError: MCP error -32001: TimeoutError: The operation was aborted due to timeout",
      "transient.mcp-timeout",
      "transient",
    ],
    ["Error calling tool echo: McpError: MCP error -32000: Connection closed", "transient.mcp-connection", "transient"],
    ["Error calling tool get-sum: McpError: MCP error -32603: internal error", "transient.mcp-internal", "transient"],
    [
      "Error calling tool get-sum: McpError: MCP error -32602: Invalid arguments for tool get-sum",
      "deterministic.mcp-invalid",
      "deterministic",
    ],
    [
      "Error calling tool nope: McpError: MCP error -32601: Method not found",
      "deterministic.mcp-invalid",
      "deterministic",
    ],
    [
      "MCP tool 'gzip-file-as-resource' on server 'everything' returned an error: fetch failed",
      "transient.mcp-tool-error",
      "transient",
    ],
    [
      "MCP tool 'charge' on server 'pay' returned an error: 503 Service Unavailable, try again later",
      "transient.mcp-tool-error",
      "transient",
    ],
    [
      "MCP tool 'gzip-file-as-resource' on server 'everything' returned an error: Error processing file file:///etc/passwd: Unsupported URL protocol",
      "deterministic.mcp-tool-error",
      "deterministic",
    ],
  ])("%s → %s", (message, id, failureClass) => {
    const rule = evidenceOf(new ToolException(message));
    expect([rule.id, rule.failureClass]).toEqual([id, failureClass]);
  });

  it("a tool error that only mentions an MCP code in its text is not read as one", () => {
    expect(evidenceOf(new Error("user wrote: MCP error -32001")).id).toBe("unknown.unclassified");
  });
});
