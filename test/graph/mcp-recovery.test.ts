/**
 * A `langgraph-replan mcp` server's runs outlive it: the official SDK client's `close()` kills a
 * stdio server whose step is still in flight (SIGTERM after 2 s, SIGKILL after 4 s), and the next
 * server started on the same database takes the run up, with no `plan_resume`, settling the call
 * cut in flight through the effect journal. Until then `plan_status` says no live server runs the
 * plan and shows the attempt in flight.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PlanService, type ServedGraph } from "../../src/mcp/index.js";
import { graph as shop } from "../fixtures/mcp/effects-graph.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-recovery-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** `langgraph-replan mcp` over stdio on `db`, serving the fixture's `shop` graph, as an agent spawns it. */
async function start(db: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    // One process (tsx's own command would fork a child the SDK's kill would miss).
    args: [
      "--import",
      "tsx",
      resolve("src/cli/main.ts"),
      "mcp",
      "--db",
      db,
      "--config",
      resolve("test/fixtures/mcp/effects.json"),
    ],
    env: { PATH: process.env.PATH ?? "", MCP_TEST_DIR: dir },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "test-agent", version: "1" });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as { structuredContent?: any; isError?: boolean };
  return { client, call, transport, stderr: () => stderr };
}

/** Resolves once `path` exists (the fixture's tools write their marks as they go). */
async function until(path: string) {
  while (!existsSync(path)) await new Promise((r) => setTimeout(r, 20));
}

/** Resolves once process `pid` has exited (the SDK sends SIGKILL and does not wait for it). */
async function gone(pid: number) {
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  while (alive()) await new Promise((r) => setTimeout(r, 20));
}

const charges = () => readFileSync(join(dir, "charges"), "utf8").split("\n").filter(Boolean);

describe("a server that dies mid-step on SQLite", () => {
  it("the next server takes the run up at launch and settles the cut charge by its verify probe: one charge, no plan_resume", async () => {
    const db = join(dir, "plans.sqlite");
    const first = await start(db);
    const created = await first.call("plan_create", { goal: "pay for order 17" });
    const planId = created.structuredContent.plan_id as string;
    await until(join(dir, "charge.reached"));
    const live = await first.call("plan_status", { plan_id: planId });
    expect(live.structuredContent).toMatchObject({ status: "running", server: { live: true } });
    expect(live.structuredContent.message).toBeUndefined();
    // The SDK closes stdin, then SIGTERMs after 2 s and SIGKILLs after 4 s: the charge never answers.
    const pid = first.transport.pid!;
    await first.client.close();
    await gone(pid);
    expect(charges()).toHaveLength(1);

    // Before any server takes it up: no live server, and the charge in flight as the journal has it.
    const handle = new Database(db);
    try {
      const saver = new SqliteSaver(handle);
      const service = new PlanService({
        graphs: {
          shop: (shop as unknown as { builder: { compile(o: object): ServedGraph } }).builder.compile({
            checkpointer: saver,
          }),
        },
        saver,
      });
      const intent = handle.prepare("SELECT key, attempt, at, result FROM langgraph_replan_effects").all() as {
        key: string;
        attempt: number;
        at: string;
        result: string | null;
      }[];
      expect(intent).toEqual([{ key: charges()[0]!.split(" ")[0], attempt: 1, at: expect.any(String), result: null }]);
      const cut = (await service.status(planId)) as any;
      expect(cut.status).toBe("running");
      expect(cut.server).toEqual({ live: false });
      expect(cut.message).toBe(
        `no live server runs plan "${planId}": the process that ran it ended mid-step; ` +
          "a langgraph-replan mcp server started on this database takes it up (or call plan_resume)",
      );
      expect(cut.steps.map((s: object) => ({ ...s, facts: undefined }))).toEqual([
        {
          id: "pay",
          goal: "charge 40",
          status: "running",
          attempts: 1,
          started_at: intent[0]!.at,
          in_doubt: true,
          facts: undefined,
        },
        { id: "mail", goal: "send the receipt", status: "pending", attempts: 0, facts: undefined },
      ]);
      expect(cut.timing.started_at).toBe(intent[0]!.at);
    } finally {
      handle.close();
    }

    // A charge called again would answer at once now, and be counted.
    writeFileSync(join(dir, "gate"), "open");
    const second = await start(db);
    try {
      const done = await second.call("plan_wait", { plan_id: planId, timeout_s: 60 });
      expect(done.structuredContent).toMatchObject({
        status: "completed",
        timed_out: false,
        progress: { done: 2, total: 2 },
      });
      // A finished run has no server to speak of.
      expect(done.structuredContent.server).toBeUndefined();
      expect(
        done.structuredContent.steps.map((s: { id: string; status: string; attempts: number }) => [
          s.id,
          s.status,
          s.attempts,
        ]),
      ).toEqual([
        ["pay", "succeeded", 1],
        ["mail", "succeeded", 1],
      ]);
      expect(charges()).toHaveLength(1);
      const report = await second.call("plan_report", { plan_id: planId, format: "json" });
      expect(report.structuredContent.report.metrics).toMatchObject({
        effectsVerified: 1,
        effectsInDoubt: 0,
        effectsHappened: 0,
        toolAttempts: 2,
        decisions: 1,
      });
    } finally {
      await second.client.close();
    }
    const handle2 = new Database(db);
    try {
      const saver = new SqliteSaver(handle2);
      const state = (await (shop as unknown as { builder: { compile(o: object): ServedGraph } }).builder
        .compile({ checkpointer: saver })
        .getState({ configurable: { thread_id: planId } })) as { values: any };
      expect(
        state.values.decisions.map((d: { stepId: string; rule: string; attempt: number }) => [
          d.stepId,
          d.rule,
          d.attempt,
        ]),
      ).toEqual([["pay", "effect.verified", 1]]);
      expect(
        state.values.sideEffects.map((e: { stepId: string; idempotencyKey: string }) => [e.stepId, e.idempotencyKey]),
      ).toEqual([["pay", charges()[0]!.split(" ")[0]]]);
      expect(state.values.facts.sent.value).toBe("receipt r-40");
    } finally {
      handle2.close();
    }
  }, 90_000);
});
