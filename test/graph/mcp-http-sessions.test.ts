/**
 * `langgraph-replan mcp --http` keeps a session per client (docs/decisions/0063-http-sessions.md):
 * the server knows the client from its `initialize` and reaches it later on the session's stream,
 * so a question is elicited over Streamable HTTP as over stdio. The sessions are bounded in number
 * and closed when idle; DELETE ends one. Only 127.0.0.1 is served.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type ElicitRequest } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HttpSessions, MAX_SESSIONS } from "../../src/cli/mcp-sessions.js";
import { mcpArgs, startHttp, type ToolResult } from "../helpers/mcp.js";

/** What `langgraph-replan mcp` exits with when told to stop. */
const EXIT_ON_SIGTERM = 0;

let dir: string;
beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), "mcp-http-sessions-"))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A session as the map holds it: only closing matters here. */
function fake(name: string, closed: string[]) {
  return { close: async () => void closed.push(name) };
}

describe("HttpSessions: bounded, and closed when idle", () => {
  it("past `max`, the least recently used session is closed to make room", () => {
    const closed: string[] = [];
    const sessions = new HttpSessions<ReturnType<typeof fake>>({ max: 3, idleMs: 1000, now: () => 0 });
    for (const id of ["a", "b", "c"]) sessions.add(id, fake(id, closed));
    sessions.use("a")!.done();
    sessions.add("d", fake("d", closed));
    expect([closed, sessions.ids()]).toEqual([["b"], ["c", "a", "d"]]);
    expect(sessions.use("b")).toBeUndefined();
    sessions.add("e", fake("e", closed));
    expect([closed, sessions.size]).toEqual([["b", "c"], 3]);
  });

  it("a session with a request or stream open is evicted only when every session has one", () => {
    const closed: string[] = [];
    const sessions = new HttpSessions<ReturnType<typeof fake>>({ max: 2, idleMs: 1000, now: () => 0 });
    sessions.add("a", fake("a", closed));
    sessions.add("b", fake("b", closed));
    const streaming = sessions.use("a")!;
    sessions.use("b")!.done();
    sessions.add("c", fake("c", closed));
    expect([closed, sessions.ids()]).toEqual([["b"], ["a", "c"]]);
    sessions.use("c");
    sessions.add("d", fake("d", closed));
    expect([closed, sessions.ids()]).toEqual([
      ["b", "a"],
      ["c", "d"],
    ]);
    streaming.done();
    streaming.done();
    expect(sessions.size).toBe(2);
  });

  it("a session idle for `idleMs` with nothing open is closed by the sweep; one with a stream open is kept", async () => {
    let now = 0;
    const closed: string[] = [];
    const sessions = new HttpSessions<ReturnType<typeof fake>>({ max: 10, idleMs: 1000, now: () => now });
    sessions.add("idle", fake("idle", closed));
    sessions.add("streaming", fake("streaming", closed));
    const stream = sessions.use("streaming")!;
    now = 999;
    sessions.sweep();
    expect(closed).toEqual([]);
    now = 1000;
    sessions.sweep();
    expect([closed, sessions.ids()]).toEqual([["idle"], ["streaming"]]);
    now = 5000;
    stream.done();
    sessions.sweep();
    expect(closed).toEqual(["idle"]);
    now = 6000;
    sessions.sweep();
    expect([closed, sessions.size]).toEqual([["idle", "streaming"], 0]);
    sessions.add("x", fake("x", closed));
    sessions.forget("x");
    await sessions.closeAll();
    expect([closed, sessions.size]).toEqual([["idle", "streaming"], 0]);
  });

  it("closeAll closes every session once", async () => {
    const closed: string[] = [];
    const sessions = new HttpSessions<ReturnType<typeof fake>>();
    for (const id of ["a", "b"]) sessions.add(id, fake(id, closed));
    await sessions.closeAll();
    await sessions.closeAll();
    expect([closed, sessions.size]).toEqual([["a", "b"], 0]);
  });
});

/** A raw request to the server: status, session header and body. */
function send(url: string, method: string, body: unknown, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; session: string | undefined; body: string }>((done, failed) => {
    const at = new URL(url);
    const req = request(
      {
        host: "127.0.0.1",
        port: Number(at.port),
        path: at.pathname,
        method,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () =>
          done({ status: res.statusCode ?? 0, session: res.headers["mcp-session-id"] as string, body: text }),
        );
      },
    );
    req.on("error", failed);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const initialize = (i: number) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: `raw-${i}`, version: "1" } },
});

describe("langgraph-replan mcp --http: sessions", () => {
  it(`at most ${MAX_SESSIONS} sessions: one more closes the least recently used; DELETE ends a session`, async () => {
    const { child, url } = await startHttp(
      mcpArgs(join(dir, "plans.sqlite"), "test/fixtures/mcp/langgraph.json", "--http", "127.0.0.1:0"),
    );
    try {
      const ids: string[] = [];
      for (let i = 0; i <= MAX_SESSIONS; i++) {
        const opened = await send(url, "POST", initialize(i));
        expect(opened.status).toBe(200);
        ids.push(opened.session!);
      }
      expect(new Set(ids).size).toBe(MAX_SESSIONS + 1);
      const ping = { jsonrpc: "2.0", id: 2, method: "ping" };
      const asked = (id: string) =>
        send(url, "POST", ping, { "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" });
      const gone = await asked(ids[0]!);
      expect([gone.status, JSON.parse(gone.body)]).toEqual([
        404,
        { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null },
      ]);
      expect((await asked(ids[1]!)).status).toBe(200);
      const last = ids.at(-1)!;
      expect((await asked(last)).status).toBe(200);
      expect((await send(url, "DELETE", undefined, { "mcp-session-id": last })).status).toBe(200);
      expect((await asked(last)).status).toBe(404);
      // A request with no session (nor an initialize) is still served on its own, as before.
      expect((await send(url, "POST", ping)).status).toBe(200);
    } finally {
      child.kill("SIGTERM");
    }
  }, 120_000);

  it("SIGTERM with a client's session stream open: the server closes its sessions and exits", async () => {
    const { child, url } = await startHttp(
      mcpArgs(join(dir, "plans.sqlite"), "test/fixtures/mcp/langgraph.json", "--http", "127.0.0.1:0"),
    );
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((done) =>
      child.once("exit", (code, signal) => done([code, signal])),
    );
    const client = new Client({ name: "http-agent", version: "1" });
    const transport = new StreamableHTTPClientTransport(new URL(url));
    try {
      await client.connect(transport);
      expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      await client.callTool({ name: "plan_list", arguments: {} });
      child.kill("SIGTERM");
      expect(await exited).toEqual([EXIT_ON_SIGTERM, null]);
    } finally {
      await client.close();
      child.kill("SIGKILL");
    }
  }, 120_000);

  it("a plan review is elicited over --http from the client that created the plan, and accepted", async () => {
    const { child, url } = await startHttp(
      mcpArgs(join(dir, "plans.sqlite"), "test/fixtures/mcp/langgraph.json", "--http", "127.0.0.1:0"),
      { LANGGRAPH_CLI_NO_ANALYTICS: "1", MCP_TEST_REVIEW: "1" },
    );
    const client = new Client({ name: "elicit-agent", version: "1" }, { capabilities: { elicitation: { form: {} } } });
    const asked: ElicitRequest[] = [];
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push(req);
      return { action: "accept", content: { action: "approve" } };
    });
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as ToolResult;
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      const id = (await call("plan_create", { goal: "asked over http" })).structuredContent.plan_id as string;
      // The form goes out in the background, once the run pauses for the review.
      while (asked.length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
      // The accepted answer resumes the run in the background: a wait may first see it running.
      let done = (await call("plan_wait", { plan_id: id, timeout_s: 60 })).structuredContent;
      for (let i = 0; i < 3 && done.status === "running"; i++)
        done = (await call("plan_wait", { plan_id: id, timeout_s: 60 })).structuredContent;
      expect([done.status, done.progress]).toEqual(["completed", { done: 2, total: 2 }]);
      expect(asked).toHaveLength(1);
      expect((asked[0]!.params as { message: string }).message.split("\n")[1]).toBe("Goal: asked over http");
      await client.close();
    } finally {
      child.kill("SIGTERM");
    }
  }, 120_000);
});
