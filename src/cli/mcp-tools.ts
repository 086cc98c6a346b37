/**
 * `langgraph-replan mcp --tools FILE`: the tools of the MCP servers an `mcpServers` JSON names (the
 * file MCP clients use: `{ "mcpServers": { "name": { "command", "args", "env" } | { "url" } } }`),
 * loaded through `@langchain/mcp-adapters` as step tools of the zero-configuration graph.
 */
import { existsSync, readFileSync } from "node:fs";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { loadPackage } from "./packages.js";
import { CliError } from "./target-error.js";

/** The servers' tools, and how to let the servers go (at exit). */
export interface ServerTools {
  tools: StructuredToolInterface[];
  close(): Promise<void>;
}

/** Reads `file` and connects to every server it names; one that fails to start fails the command, named. */
export async function loadServerTools(file: string): Promise<ServerTools> {
  if (!existsSync(file)) throw new CliError(`--tools ${file}: no such file (an "mcpServers" JSON)`);
  let config: { mcpServers?: unknown };
  try {
    config = JSON.parse(readFileSync(file, "utf8")) as typeof config;
  } catch (error) {
    throw new CliError(`--tools ${file} is not JSON: ${(error as Error).message}`);
  }
  const servers = config.mcpServers;
  if (typeof servers !== "object" || servers === null || Object.keys(servers).length === 0)
    throw new CliError(`--tools ${file} names no servers: expected { "mcpServers": { "name": { "command": … } } }`);
  const { MultiServerMCPClient } = await loadPackage("--tools", () => import("@langchain/mcp-adapters"));
  const client = new MultiServerMCPClient({
    mcpServers: servers as ConstructorParameters<typeof MultiServerMCPClient>[0] extends { mcpServers: infer S }
      ? S
      : never,
    onConnectionError: "throw",
    // Server-named tools: two servers may each have a `search`.
    prefixToolNameWithServerName: true,
  });
  try {
    const tools = (await client.getTools()).map(asStepTool);
    return { tools, close: () => client.close() };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw new CliError(`--tools ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * The server's tool as a step tool: its output is the object a step's `produces` reads (the
 * result's `structuredContent`, else its text when that is a JSON object, else `{ text }`).
 * Errors pass through as the adapter throws them, to be classified like any tool's.
 */
function asStepTool(served: StructuredToolInterface): StructuredToolInterface {
  const stepTool = tool(async (args: unknown, config) => stepOutput(await served.invoke(args, config)), {
    name: served.name,
    description: served.description,
    schema: served.schema as Parameters<typeof tool>[1]["schema"],
  }) as StructuredToolInterface;
  (stepTool as WithMetadata).metadata = { sideEffects: sideEffectsOf(served) };
  return stepTool;
}

/**
 * What a server's tool may change, from its MCP annotations (kept by the adapter in `metadata`): only
 * `readOnlyHint: true` says it changes nothing — the protocol's default is a tool that may be destructive —
 * so any other tool is keyed, journaled and reviewed when a replan adds it, as a side-effecting tool is.
 */
export function sideEffectsOf(served: StructuredToolInterface): string[] {
  const annotations = (served as WithMetadata).metadata?.annotations as { readOnlyHint?: unknown } | undefined;
  return annotations?.readOnlyHint === true ? [] : [served.name];
}

type WithMetadata = { metadata?: Record<string, unknown> };

type Block = { type?: unknown; text?: unknown; structuredContent?: unknown };

export function stepOutput(result: unknown): Record<string, unknown> {
  const blocks = (Array.isArray(result) ? result : [result]) as (Block | string)[];
  for (const block of blocks)
    if (typeof block === "object" && isRecord(block?.structuredContent)) return block.structuredContent;
  const text = blocks
    .map((block) => (typeof block === "string" ? block : typeof block?.text === "string" ? block.text : ""))
    .join("");
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) return parsed;
  } catch {
    // Not JSON: the text is the output.
  }
  return { text };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
