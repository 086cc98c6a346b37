/**
 * `langgraph-replan mcp` as an agent meets it: a real MCP client spawns the command over stdio,
 * which loads the graphs of a langgraph.json (TypeScript, through tsx) onto a SQLite file. A
 * server killed while a step is in flight leaves a plan no live server runs; the next server
 * started on the file takes it up (test/graph/mcp-recovery.test.ts: the same through the SDK's close).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import Database from "better-sqlite3";
import { PlanService, type ServedGraph } from "../../src/mcp/index.js";
import { graph as weather } from "../fixtures/mcp/graph.js";
import { request } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mcpArgs, startHttp as startHttpServer, startStdio, until } from "../helpers/mcp.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-stdio-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const start = (env: Record<string, string> = {}) =>
  startStdio({
    db: join(dir, "plans.sqlite"),
    config: "test/fixtures/mcp/langgraph.json",
    env: { LANGGRAPH_CLI_NO_ANALYTICS: "1", ...env },
  });

/** `langgraph-replan mcp --http 127.0.0.1:0` in a child process; its URL as it prints it. */
const startHttp = () =>
  startHttpServer(mcpArgs(join(dir, "plans.sqlite"), "test/fixtures/mcp/langgraph.json", "--http", "127.0.0.1:0"));

describe("langgraph-replan mcp over stdio", () => {
  it("serves the plan managers of langgraph.json; a killed server's plan shows no live server, and the next server takes it up with no plan_resume", async () => {
    const gate = join(dir, "gate");
    const first = await start({ MCP_TEST_GATE: gate });
    const info = first.client.getServerVersion();
    expect(info?.name).toBe("langgraph-replan");
    const created = await first.call("plan_create", { goal: "a day out", idempotency_key: "k1" });
    expect(created.structuredContent).toMatchObject({ status: "running", created: true });
    expect(created.structuredContent.server.graphs).toEqual(["weather"]);
    expect(first.stderr()).toContain('graph "not_a_plan" is not a plan manager (createPlanManager): not served');
    const planId = created.structuredContent.plan_id as string;
    // The step is in flight (it waits for the gate): kill the server outright.
    const timedOut = await first.call("plan_wait", { plan_id: planId, timeout_s: 0.2 });
    expect(timedOut.structuredContent).toMatchObject({ status: "running", timed_out: true });
    await until(`${gate}.reached`);
    process.kill(first.transport.pid!, "SIGKILL");
    await first.client.close().catch(() => undefined);

    // Before a server takes it up: no live server, and the forecast's attempt in flight, from the
    // checkpoint the run stopped at (the executor visit it led to started that step).
    const handle = new Database(join(dir, "plans.sqlite"));
    try {
      const saver = new SqliteSaver(handle);
      const served = (weather as unknown as { builder: { compile(o: object): ServedGraph } }).builder.compile({
        checkpointer: saver,
      });
      const checkpoint = await served.getState({ configurable: { thread_id: planId } });
      const cut = await new PlanService({ graphs: { weather: served }, saver }).status(planId);
      expect(cut).toMatchObject({ status: "running", server: { live: false }, plan_version: 1 });
      expect(cut.steps.map(({ id, status, attempts, started_at }) => ({ id, status, attempts, started_at }))).toEqual([
        { id: "fetch", status: "running", attempts: 1, started_at: checkpoint.createdAt },
        { id: "plan", status: "pending", attempts: 0, started_at: undefined },
      ]);
    } finally {
      handle.close();
    }

    // The next server takes the plan up at launch, with no plan_resume: it is its run now.
    rmSync(`${gate}.reached`);
    const second = await start({ MCP_TEST_GATE: gate });
    await until(`${gate}.reached`);
    const found = await second.call("plan_status", { plan_id: planId });
    expect(found.structuredContent).toMatchObject({
      plan_id: planId,
      goal: "a day out",
      status: "running",
      server: { live: true },
    });
    const resumed = await second.call("plan_resume", { plan_id: planId });
    expect(resumed.isError).toBe(true);
    expect(JSON.parse((resumed as unknown as { content: { text: string }[] }).content[0]!.text)).toMatchObject({
      error: "thread_busy",
    });
    // The same key still names the same plan after the restart.
    const again = await second.call("plan_create", { goal: "a day out", idempotency_key: "k1" });
    expect(again.structuredContent).toMatchObject({ plan_id: planId, created: false });
    writeFileSync(gate, "open");
    const done = await second.call("plan_wait", { plan_id: planId, timeout_s: 60 });
    expect(done.structuredContent).toMatchObject({ status: "completed", progress: { done: 2, total: 2 } });
    expect(done.structuredContent.steps.map((s: { id: string; attempts: number }) => [s.id, s.attempts])).toEqual([
      ["fetch", 1],
      ["plan", 1],
    ]);
    expect(done.structuredContent.steps.map((s: { facts: object }) => s.facts)).toEqual([
      { forecast: "trusted" },
      { day: "trusted" },
    ]);
    await second.client.close();
    expect(existsSync(join(dir, "plans.sqlite"))).toBe(true);
  }, 60_000);

  it("--http serves Streamable HTTP on 127.0.0.1; a plan goes on after its client disconnects", async () => {
    const { child, url } = await startHttp();
    try {
      const connect = async () => {
        const client = new Client({ name: "http-agent", version: "1" });
        await client.connect(new StreamableHTTPClientTransport(new URL(url)));
        return client;
      };
      // Only /mcp, and only by this server's own names (a page using DNS rebinding sends its own Host).
      const port = new URL(url).port;
      // node:http, not fetch: fetch will not send a Host header of its own choosing.
      const post = (path: string, headers: Record<string, string> = {}) =>
        new Promise<{ status: number }>((done, failed) => {
          const req = request(
            {
              host: "127.0.0.1",
              port: Number(port),
              path,
              method: "POST",
              headers: { "content-type": "application/json", ...headers },
            },
            (res) => {
              res.resume();
              done({ status: res.statusCode ?? 0 });
            },
          );
          req.on("error", failed);
          req.end("{}");
        });
      expect((await post("/other")).status).toBe(404);
      expect((await post("/mcp", { host: `evil.example:${port}` })).status).toBe(403);
      expect((await post("/mcp", { origin: "http://evil.example" })).status).toBe(403);
      const one = await connect();
      const created = (await one.callTool({ name: "plan_create", arguments: { goal: "over http" } })) as any;
      const planId = created.structuredContent.plan_id as string;
      await one.close();
      const two = await connect();
      const done = (await two.callTool({ name: "plan_wait", arguments: { plan_id: planId, timeout_s: 60 } })) as any;
      expect(done.structuredContent).toMatchObject({ plan_id: planId, status: "completed", timed_out: false });
      await two.close();
    } finally {
      child.kill("SIGTERM");
    }
  }, 60_000);

  it("an agent over Streamable HTTP: create with its own plan, wait for the question, answer it, wait for the end, report", async () => {
    const { child, url } = await startHttp();
    try {
      const client = new Client({ name: "http-agent", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      const call = async (name: string, args: Record<string, unknown>) =>
        (await client.callTool({ name, arguments: args })) as { structuredContent?: any; isError?: boolean };
      const plan = {
        steps: [
          { id: "fetch", goal: "fetch the forecast", tool: "forecast", produces: ["forecast"] },
          {
            id: "confirm",
            goal: "confirm the day out",
            human: { prompt: "Go out?" },
            dependsOn: ["fetch"],
            produces: ["by"],
          },
          {
            id: "plan",
            goal: "plan the day",
            tool: "planDay",
            dependsOn: ["confirm"],
            inputs: ["forecast"],
            produces: ["day"],
          },
        ],
      };
      const created = await call("plan_create", { goal: "a confirmed day out", plan });
      expect(created.structuredContent).toMatchObject({ status: "running", created: true });
      const planId = created.structuredContent.plan_id as string;
      const asked = await call("plan_wait", { plan_id: planId, timeout_s: 60 });
      expect(asked.structuredContent).toMatchObject({
        status: "awaiting_human",
        timed_out: false,
        progress: { done: 1, total: 3 },
        question: { kind: "human_step" },
      });
      const wrong = await call("plan_answer", { plan_id: planId, answer: { action: "approve" } });
      expect(wrong.isError).toBe(true);
      const answered = await call("plan_answer", {
        plan_id: planId,
        answer: { action: "complete", output: { by: "the agent" } },
      });
      expect(answered.structuredContent).toEqual({ plan_id: planId, status: "running" });
      const done = await call("plan_wait", { plan_id: planId, timeout_s: 60 });
      expect(done.structuredContent).toMatchObject({
        status: "completed",
        timed_out: false,
        progress: { done: 3, total: 3 },
      });
      expect(done.structuredContent.steps.map((s: { id: string; facts: object }) => [s.id, s.facts])).toEqual([
        ["fetch", { forecast: "trusted" }],
        ["confirm", { by: "trusted" }],
        ["plan", { day: "trusted" }],
      ]);
      const report = await call("plan_report", { plan_id: planId, format: "markdown" });
      expect(report.structuredContent.report).toContain("# a confirmed day out\n\nStatus: **completed**");
      await client.close();
    } finally {
      child.kill("SIGTERM");
    }
  }, 60_000);
});
