/**
 * `langgraph-replan mcp` with no langgraph.json (docs/decisions/0060-sampling-through-the-client.md):
 * the graph `plans`, planned by the client's model over MCP sampling, its steps done by the client
 * or by the tools of the MCP servers `--tools` names — spawned over stdio as an agent spawns it,
 * with a tiny MCP server (test/fixtures/mcp-word-server.mjs) as the tool source.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, type CreateMessageRequest } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stepOutput } from "../../src/cli/mcp-tools.js";
import type { ToolResult } from "../helpers/mcp.js";

let dir: string;
beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), "mcp-zero-config-"))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Count the words with the server's tool, then the agent reports the count. */
const countDraft = {
  steps: [
    { id: "count", goal: "count the words", tool: "words__count_words", inputs: ["text"], produces: ["words"] },
    {
      id: "report",
      goal: "tell the user the count",
      tool: null,
      external: { instructions: "tell the user how many words, answer { told: true }" },
      dependsOn: ["count"],
      inputs: ["words"],
      produces: ["told"],
    },
  ],
  assumptions: [],
};

/** Node's arguments for `langgraph-replan mcp --db <dir>/plans.sqlite …extra`, run in `dir` (no langgraph.json). */
const cliArgs = (extra: string[]) => [
  "--import",
  pathToFileURL(resolve("node_modules/tsx/dist/loader.mjs")).href,
  resolve("src/cli/main.ts"),
  "mcp",
  "--db",
  join(dir, "plans.sqlite"),
  ...extra,
];

/** A client that samples: each request answered with the next reply. */
function samplingClient(replies: string[]) {
  const requests: CreateMessageRequest["params"][] = [];
  const client = new Client({ name: "sampling-agent", version: "1" }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, (request) => {
    requests.push(request.params);
    return { role: "assistant", model: "client-model-1", content: { type: "text", text: replies.shift() ?? "" } };
  });
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  return { client, call, requests };
}

/** `langgraph-replan mcp` in `dir` (no langgraph.json), as an agent spawns it, with a client that samples. */
async function spawnZeroConfig(extra: string[], replies: string[]) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: cliArgs(extra),
    cwd: dir,
    env: { PATH: process.env.PATH ?? "" },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const { client, call, requests } = samplingClient(replies);
  await client.connect(transport);
  return { client, call, requests, stderr: () => stderr };
}

describe("langgraph-replan mcp with no langgraph.json", () => {
  it("serves plans: planned by the client's model, a step by the --tools server's tool, a step by the client", async () => {
    const tools = join(dir, "mcp.json");
    const server = { command: process.execPath, args: [resolve("test/fixtures/mcp-word-server.mjs")] };
    writeFileSync(tools, JSON.stringify({ mcpServers: { words: server } }));
    const { client, call, requests, stderr } = await spawnZeroConfig(["--tools", tools], [JSON.stringify(countDraft)]);
    try {
      const created = await call("plan_create", { goal: "count my words", context: { text: "one two three" } });
      expect(created.structuredContent!.server.graphs).toEqual(["plans"]);
      const planId = created.structuredContent!.plan_id as string;
      expect((await call("plan_wait", { plan_id: planId, timeout_s: 300 })).structuredContent!.status).toBe(
        "awaiting_human",
      );
      const [next] = (await call("plan_next", { plan_id: planId })).structuredContent!.steps;
      expect([next.stepId, next.context.inputs]).toEqual(["report", { words: 3 }]);
      await call("plan_submit", { plan_id: planId, step_id: "report", output: { told: true } });
      const done = (await call("plan_wait", { plan_id: planId, timeout_s: 300 })).structuredContent!;
      expect(done).toMatchObject({
        status: "completed",
        steps: [
          { id: "count", status: "succeeded", attempts: 1 },
          { id: "report", status: "succeeded", attempts: 1 },
        ],
      });
      expect(requests).toHaveLength(1);
      expect(JSON.stringify(requests[0]!.messages)).toContain("words__count_words");
      expect(stderr()).toContain(
        'no langgraph.json: serving "plans", planned by the client\'s model (MCP sampling), with 1 tools: words__count_words',
      );
    } finally {
      await client.close();
    }
  }, 120_000);
});

describe("langgraph-replan mcp --http with no langgraph.json", () => {
  it("a session keeps the client: the plan is made by the client's model over Streamable HTTP", async () => {
    const tools = join(dir, "mcp.json");
    const server = { command: process.execPath, args: [resolve("test/fixtures/mcp-word-server.mjs")] };
    writeFileSync(tools, JSON.stringify({ mcpServers: { words: server } }));
    const child = spawn(process.execPath, cliArgs(["--http", "127.0.0.1:0", "--tools", tools]), {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    try {
      let text = "";
      const url = await new Promise<string>((found, failed) => {
        child.stderr.on("data", (chunk: Buffer) => {
          text += chunk.toString();
          const match = /on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(text);
          if (match) found(match[1]!);
        });
        child.once("exit", (code) => failed(new Error(`mcp exited ${code}: ${text}`)));
      });
      const { client, call, requests } = samplingClient([JSON.stringify(countDraft)]);
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      const planId = (await call("plan_create", { goal: "count my words", context: { text: "one two three" } }))
        .structuredContent!.plan_id as string;
      expect((await call("plan_wait", { plan_id: planId, timeout_s: 300 })).structuredContent!.status).toBe(
        "awaiting_human",
      );
      const [next] = (await call("plan_next", { plan_id: planId })).structuredContent!.steps;
      expect([next.stepId, next.context.inputs]).toEqual(["report", { words: 3 }]);
      await call("plan_submit", { plan_id: planId, step_id: "report", output: { told: true } });
      const done = (await call("plan_wait", { plan_id: planId, timeout_s: 300 })).structuredContent!;
      expect(done).toMatchObject({
        status: "completed",
        steps: [
          { id: "count", status: "succeeded", attempts: 1 },
          { id: "report", status: "succeeded", attempts: 1 },
        ],
      });
      expect(done.error).toBeUndefined();
      expect(requests).toHaveLength(1);
      expect(JSON.stringify(requests[0]!.messages)).toContain("words__count_words");
      await client.close();
    } finally {
      child.kill("SIGTERM");
    }
  }, 120_000);
});

describe("--tools: what a step records of an MCP tool's result", () => {
  it("the structured content, else the text as a JSON object, else { text }", () => {
    expect(stepOutput({ type: "text", text: '{"words":3}', structuredContent: { words: 4 } })).toEqual({ words: 4 });
    expect(stepOutput([{ type: "text", text: '{"words":3}' }])).toEqual({ words: 3 });
    expect(stepOutput("plain words")).toEqual({ text: "plain words" });
    expect(stepOutput([{ type: "text", text: "[1,2]" }])).toEqual({ text: "[1,2]" });
  });
});
