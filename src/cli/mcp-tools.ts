/**
 * `langgraph-replan mcp --tools FILE`: the tools of the MCP servers an `mcpServers` JSON names (the
 * file MCP clients use: `{ "mcpServers": { "name": { "command", "args", "env" } | { "url" } } }`),
 * loaded through `@langchain/mcp-adapters` as step tools of the zero-configuration graph.
 */
import { existsSync, readFileSync } from "node:fs";
import type { StructuredToolInterface } from "@langchain/core/tools";
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
    return { tools: await client.getTools(), close: () => client.close() };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw new CliError(`--tools ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
