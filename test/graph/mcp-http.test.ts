/**
 * `langgraph-replan mcp --http` against strangers: a bearer token (from the environment, never the
 * command line) required for any address other than loopback and checked on every request, and a
 * JSON-RPC batch bounded so one request cannot start thousands of runs. Only 127.0.0.1 is served.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { connect as connectTcp } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  allowedHosts,
  bearerToken,
  httpAddress,
  MAX_BATCH,
  refusal,
  refuseTokenFlag,
  unauthorized,
} from "../../src/cli/mcp-http.js";
import { mcpArgs as helperArgs, startHttp as startHttpServer } from "../helpers/mcp.js";

const TOKEN = "s3cret-token-of-32-characters-xx";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-http-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const mcpArgs = (...extra: string[]) =>
  helperArgs(join(dir, "plans.sqlite"), "test/fixtures/mcp/langgraph.json", ...extra);

/** The server in a child process, with `env`; its URL as it prints it. */
const startHttp = (env: Record<string, string>) => startHttpServer(mcpArgs("--http", "127.0.0.1:0"), env);

/** A raw POST to the server: status, headers and body. */
function post(url: string, body: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((done, failed) => {
    const at = new URL(url);
    const req = request(
      {
        host: "127.0.0.1",
        port: Number(at.port),
        path: at.pathname,
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on("error", failed);
    req.end(body);
  });
}

async function connect(url: string, token: string) {
  const client = new Client({ name: "http-agent", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

describe("mcp --http: the bearer token", () => {
  it("an address other than loopback is refused without a token; with one, any address is served", () => {
    expect(() => bearerToken({ host: "0.0.0.0", port: 3100 }, undefined, {})).toThrow(
      "--http 0.0.0.0:3100 serves other machines, which needs a bearer token: put one in LANGGRAPH_REPLAN_MCP_TOKEN " +
        "(or in a variable named by --token-env NAME; never on the command line), or serve 127.0.0.1",
    );
    expect(() => bearerToken({ host: "192.168.1.20", port: 1 }, undefined, { LANGGRAPH_REPLAN_MCP_TOKEN: "" })).toThrow(
      /needs a bearer token/,
    );
    for (const host of ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
      expect(bearerToken({ host, port: 1 }, undefined, {})).toBeUndefined();
    expect(bearerToken({ host: "0.0.0.0", port: 1 }, undefined, { LANGGRAPH_REPLAN_MCP_TOKEN: TOKEN })).toBe(TOKEN);
    expect(bearerToken({ host: "0.0.0.0", port: 1 }, "PLANS_TOKEN", { PLANS_TOKEN: TOKEN })).toBe(TOKEN);
    expect(() => bearerToken({ host: "127.0.0.1", port: 1 }, "PLANS_TOKEN", {})).toThrow(
      "--token-env PLANS_TOKEN: the environment variable PLANS_TOKEN is not set",
    );
    expect(() => bearerToken({ host: "0.0.0.0", port: 1 }, undefined, { LANGGRAPH_REPLAN_MCP_TOKEN: "short" })).toThrow(
      "the bearer token in LANGGRAPH_REPLAN_MCP_TOKEN is 5 characters: give at least 16 (e.g. openssl rand -hex 32)",
    );
    expect(() => refuseTokenFlag(["--http", "0.0.0.0:1", `--token=${TOKEN}`])).toThrow(/visible to every user/);
    expect(() => refuseTokenFlag(["--token", TOKEN])).toThrow(/visible to every user/);
  });

  it("a request without the token, or with another, is answered 401 with WWW-Authenticate", () => {
    expect(unauthorized(undefined, undefined)).toBeUndefined();
    expect(unauthorized(undefined, TOKEN)).toEqual({
      status: 401,
      message: "this server needs Authorization: Bearer TOKEN",
      headers: { "content-type": "text/plain", "www-authenticate": 'Bearer realm="langgraph-replan"' },
    });
    expect(unauthorized(`Bearer ${TOKEN}x`, TOKEN)?.headers["www-authenticate"]).toBe(
      'Bearer realm="langgraph-replan", error="invalid_token"',
    );
    expect(unauthorized(`Basic ${TOKEN}`, TOKEN)?.status).toBe(401);
    expect(unauthorized(`Bearer ${TOKEN.slice(0, 8)}`, TOKEN)?.status).toBe(401);
    expect(unauthorized(`Bearer ${TOKEN}`, TOKEN)).toBeUndefined();
    expect(unauthorized(`bearer ${TOKEN}`, TOKEN)).toBeUndefined();
  });

  it("bound to every interface, any Host is served (the token guards it), and an Origin only of that Host", () => {
    expect(refusal("/mcp", "plans.lan:3100", undefined, undefined)).toBeUndefined();
    expect(refusal("/mcp", "plans.lan:3100", "http://plans.lan:3100", undefined)).toBeUndefined();
    expect(refusal("/mcp", "plans.lan:3100", "http://evil.example", undefined)?.status).toBe(403);
    expect(refusal("/mcp", undefined, undefined, undefined)?.status).toBe(403);
    const loopback = new Set(["127.0.0.1:3100", "localhost:3100"]);
    expect(refusal("/mcp", "plans.lan:3100", undefined, loopback)?.status).toBe(403);
    expect(refusal("/other", "127.0.0.1:3100", undefined, loopback)?.status).toBe(404);
  });

  it("IPv6 loopback: --http [::1]:PORT gives listen the bare ::1, and the Host clients send, [::1]:PORT, is allowed", () => {
    expect(httpAddress("[::1]:3100")).toEqual({ host: "::1", port: 3100 });
    expect(httpAddress("::1:3100")).toEqual({ host: "::1", port: 3100 });
    expect(httpAddress("3100")).toEqual({ host: "127.0.0.1", port: 3100 });
    expect(httpAddress(":3100")).toEqual({ host: "127.0.0.1", port: 3100 });
    expect(() => httpAddress("[::1]:port")).toThrow('--http needs a port or HOST:PORT (0 to 65535), got "[::1]:port"');
    const v6 = allowedHosts("::1", 3100);
    expect(v6 && [...v6]).toEqual(["[::1]:3100"]);
    expect(refusal("/mcp", "[::1]:3100", "http://[::1]:3100", v6)).toBeUndefined();
    expect(refusal("/mcp", "[::1]:3100", "http://evil.example", v6)?.status).toBe(403);
    expect(refusal("/mcp", "127.0.0.1:3100", undefined, v6)?.status).toBe(403);
    const v4 = allowedHosts("127.0.0.1", 3100);
    expect(v4 && [...v4]).toEqual(["127.0.0.1:3100", "localhost:3100"]);
    expect([allowedHosts("0.0.0.0", 3100), allowedHosts("::", 3100)]).toEqual([undefined, undefined]);
    expect(() => bearerToken({ host: "::", port: 3100 }, undefined, {})).toThrow(
      /^--http \[::\]:3100 serves other machines/,
    );
  });

  it("the command refuses 0.0.0.0 without a token, and a token on its command line, before opening anything", () => {
    const env = { PATH: process.env.PATH ?? "" };
    const open = spawnSync(process.execPath, mcpArgs("--http", "0.0.0.0:0"), { env, encoding: "utf8" });
    expect([open.status, open.stderr.trim()]).toEqual([
      1,
      "langgraph-replan: --http 0.0.0.0:0 serves other machines, which needs a bearer token: put one in " +
        "LANGGRAPH_REPLAN_MCP_TOKEN (or in a variable named by --token-env NAME; never on the command line), or serve 127.0.0.1",
    ]);
    const flag = spawnSync(process.execPath, mcpArgs("--http", "127.0.0.1:0", "--token", TOKEN), {
      env,
      encoding: "utf8",
    });
    expect(flag.status).toBe(1);
    expect(flag.stderr).toContain("a token on the command line is visible to every user of the machine");
    expect(spawnSync("ls", [dir], { encoding: "utf8" }).stdout).toBe("");
  }, 60_000);

  it("with a token, every request must carry it; a client that sends it runs a plan", async () => {
    const { child, url, stderr } = await startHttp({ LANGGRAPH_REPLAN_MCP_TOKEN: TOKEN });
    try {
      expect(stderr()).toContain("(bearer token required)");
      const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
      const none = await post(url, ping);
      expect([none.status, none.headers["www-authenticate"]]).toEqual([401, 'Bearer realm="langgraph-replan"']);
      const wrong = await post(url, ping, { authorization: "Bearer not-the-token-at-all" });
      expect([wrong.status, wrong.headers["www-authenticate"]]).toEqual([
        401,
        'Bearer realm="langgraph-replan", error="invalid_token"',
      ]);
      const client = await connect(url, TOKEN);
      const created = (await client.callTool({ name: "plan_create", arguments: { goal: "with a token" } })) as any;
      const planId = created.structuredContent.plan_id as string;
      const done = (await client.callTool({ name: "plan_wait", arguments: { plan_id: planId, timeout_s: 60 } })) as any;
      expect(done.structuredContent).toMatchObject({ status: "completed", timed_out: false });
      await client.close();
    } finally {
      child.kill("SIGTERM");
    }
  }, 60_000);
});

describe("mcp --http: batches", () => {
  it(`a batch of more than ${MAX_BATCH} messages is refused whole, naming the limit; none of its calls runs`, async () => {
    const { child, url } = await startHttp({ LANGGRAPH_REPLAN_MCP_TOKEN: TOKEN });
    try {
      const auth = { authorization: `Bearer ${TOKEN}` };
      const create = (i: number) => ({
        jsonrpc: "2.0",
        id: i,
        method: "tools/call",
        params: { name: "plan_create", arguments: { goal: `batch plan ${i}` } },
      });
      const big = await post(url, JSON.stringify(Array.from({ length: MAX_BATCH + 1 }, (_, i) => create(i))), auth);
      expect(big.status).toBe(400);
      expect(JSON.parse(big.body)).toEqual({
        jsonrpc: "2.0",
        error: {
          code: -32600,
          message: "a batch holds at most 32 messages, this one 33: send them in batches of 32 or fewer",
        },
        id: null,
      });
      const pings = Array.from({ length: MAX_BATCH }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "ping" }));
      expect((await post(url, JSON.stringify(pings), auth)).status).toBe(200);
      expect((await post(url, "{not json", auth)).status).toBe(400);
      const client = await connect(url, TOKEN);
      const listed = (await client.callTool({ name: "plan_list", arguments: {} })) as any;
      expect(listed.structuredContent.plans).toEqual([]);
      await client.close();
    } finally {
      child.kill("SIGTERM");
    }
  }, 60_000);
});

describe("mcp --http: the body limit", () => {
  it("a body over 4 MiB is answered 413 and the connection closed: the server stops reading it", async () => {
    const { child, url } = await startHttp({});
    try {
      const port = Number(new URL(url).port);
      const socket = connectTcp(port, "127.0.0.1");
      await new Promise<void>((open, failed) => socket.once("connect", open).once("error", failed));
      let answer = "";
      socket.on("data", (chunk: Buffer) => (answer += chunk.toString()));
      const closed = new Promise<void>((done) => socket.once("close", () => done()));
      socket.on("error", () => undefined);
      socket.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
          "accept: application/json, text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
      );
      // A client streaming 64 MiB: the server must hang up long before the end.
      const chunk = Buffer.from(`100000\r\n${"x".repeat(0x100000)}\r\n`);
      let sent = 0;
      while (!socket.destroyed && sent < 64) {
        sent += 1;
        if (!socket.write(chunk))
          await Promise.race([new Promise<void>((drained) => socket.once("drain", () => drained())), closed]);
      }
      if (!socket.destroyed) socket.end("0\r\n\r\n");
      await closed;
      expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 413 Payload Too Large");
      expect(sent).toBeLessThan(64);
      expect(answer.toLowerCase()).toContain("connection: close");
      expect(answer).toContain('"message":"request body over 4194304 bytes"');
    } finally {
      child.kill("SIGTERM");
    }
  }, 60_000);
});
