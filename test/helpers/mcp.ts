/**
 * What the MCP tests share: the served weather plan, `langgraph-replan mcp` started as an agent
 * starts it (over stdio, or `--http` in a child process), and a client linked to a service in memory.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import Database from "better-sqlite3";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { PlanDraft } from "../../src/index.js";
import { createMcpServer, type PlanService } from "../../src/mcp/index.js";

/** Fetch the forecast, then plan the day from it. */
export const weatherDraft: PlanDraft = {
  steps: [
    { id: "fetch", goal: "fetch the forecast", tool: "forecast", produces: ["forecast"] },
    {
      id: "plan",
      goal: "plan the day",
      tool: "planDay",
      dependsOn: ["fetch"],
      inputs: ["forecast"],
      produces: ["day"],
    },
  ],
};

/** A tool result as a test reads it. */
export type ToolResult = { structuredContent?: any; isError?: boolean; content: { text: string }[] };

/** Node's arguments for `langgraph-replan mcp --db <db> --config <config> …extra`, in one process (no tsx fork). */
export const mcpArgs = (db: string, config: string, ...extra: string[]) => [
  "--import",
  "tsx",
  resolve("src/cli/main.ts"),
  "mcp",
  "--db",
  db,
  "--config",
  resolve(config),
  ...extra,
];

/** `langgraph-replan mcp` over stdio, as an agent spawns it; `env` beside PATH. */
export async function startStdio(o: { db: string; config: string; env?: Record<string, string>; name?: string }) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    // One process (tsx's own command would fork a child the SDK's kill would miss).
    args: mcpArgs(o.db, o.config),
    env: { PATH: process.env.PATH ?? "", ...o.env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: o.name ?? "test-agent", version: "1" });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  return { client, call, transport, stderr: () => stderr };
}

/** A child process serving `--http`; resolves with its URL as it prints it (rejects if it exits first). */
export async function startHttp(args: string[], env: Record<string, string> = {}) {
  const child: ChildProcessByStdio<null, null, Readable> = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let text = "";
  const url = await new Promise<string>((found, failed) => {
    child.stderr.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const match = /on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(text);
      if (match) found(match[1]!);
    });
    child.once("exit", (code) => failed(new Error(`mcp exited ${code}: ${text}`)));
  });
  return { child, url, stderr: () => text };
}

/** A client linked in memory to `service`'s MCP server. */
export async function connectInMemory(service: PlanService) {
  const server = createMcpServer(service);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test-agent", version: "1" });
  await client.connect(clientSide);
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  return { client, call, close: () => client.close() };
}

/** Resolves once `path` exists (the fixtures' tools write their marks as they go). */
export async function until(path: string) {
  while (!existsSync(path)) await new Promise((r) => setTimeout(r, 20));
}

/** A SQLite file in a new temporary folder, and its saver; `drop` closes it and removes the folder. */
export function tempSqlite(prefix: string): {
  dir: string;
  db: Database.Database;
  saver: SqliteSaver;
  drop: () => void;
} {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const db = new Database(join(dir, "plans.sqlite"));
  const saver = new SqliteSaver(db);
  return { dir, db, saver, drop: () => (db.close(), rmSync(dir, { recursive: true, force: true })) };
}
