/**
 * Plans as MCP tasks (docs/decisions/0048-plans-as-mcp-tasks.md), driven by the official SDK client:
 * `plan_create` as a task, the task id the plan id, `tasks/get` / `tasks/result` / `tasks/list` /
 * `tasks/cancel` read from and acting on the plan — in memory, and over stdio across a restart.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPlanManager, staticPlanner } from "../../src/index.js";
import { PlanService } from "../../src/mcp/index.js";
import { scriptedTool } from "../helpers/graph.js";
import { connectInMemory, mcpArgs, startHttp, startStdio, tempSqlite, weatherDraft } from "../helpers/mcp.js";

let dir: string;
let saver: SqliteSaver;
let drop: () => void;

beforeEach(() => void ({ dir, saver, drop } = tempSqlite("mcp-tasks-")));
afterEach(() => drop());

function served(options: { reviewPlan?: boolean } = {}) {
  const graph = createPlanManager({
    tools: [scriptedTool("forecast", [{ forecast: "sunny" }]), scriptedTool("planDay", [{ day: "picnic" }])],
    planner: staticPlanner({ plan: weatherDraft }),
    ...(options.reviewPlan ? { reviewPlan: true } : {}),
  }).compile({ checkpointer: saver });
  return new PlanService({ graphs: { weather: graph }, saver, server: { name: "langgraph-replan", version: "test" } });
}

/** `plan_create` called as a task: the SDK client's own request, with `task` set. */
async function createTask(client: Client, goal: string) {
  const created = await client.request(
    { method: "tools/call", params: { name: "plan_create", arguments: { goal }, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task;
}

describe("plan_create as an MCP task", () => {
  it("is listed with task support optional, every other tool without; a call that asks for no task is answered as before", async () => {
    const service = served();
    const { client, call, close } = await connectInMemory(service);
    const { tools } = await client.listTools();
    expect(tools.filter((t) => t.execution?.taskSupport === "optional").map((t) => t.name)).toEqual(["plan_create"]);
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const created = await call("plan_create", { goal: "a day out" });
    expect(created.structuredContent).toEqual({
      plan_id: created.structuredContent.plan_id,
      status: "running",
      created: true,
      server: { name: "langgraph-replan", version: "test", graphs: ["weather"] },
    });
    await service.settled();
    await close();
  });

  it("the task is the plan: working, input_required with the question, then completed; tasks/result is plan_status's", async () => {
    const service = served({ reviewPlan: true });
    const { client, call, close } = await connectInMemory(service);
    const task = await createTask(client, "a day out");
    expect(task.taskId).toMatch(/^[0-9a-f]{32}--weather$/);
    expect([task.status, task.ttl]).toEqual(["working", null]);
    expect((await service.wait(task.taskId, 120)).status).toBe("awaiting_review");
    const waiting = await client.experimental.tasks.getTask(task.taskId);
    expect([waiting.status, waiting.statusMessage]).toEqual([
      "input_required",
      `plan review: ${(await service.status(task.taskId)).question!.reason} (plan_answer)`,
    ]);
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map((t) => [t.taskId, t.status])).toEqual([[task.taskId, "input_required"]]);
    expect(
      (await call("plan_answer", { plan_id: task.taskId, answer: { action: "approve" } })).isError,
    ).toBeUndefined();
    // Waits for the end, as plan_wait does, and answers what plan_status answers then.
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toEqual({ ...(await service.status(task.taskId)) });
    expect((result.structuredContent as { status: string }).status).toBe("completed");
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe("completed");
    await close();
  });

  it("tasks/cancel stops the plan (plan_resume carries it on); an unknown task id is refused", async () => {
    const service = served({ reviewPlan: true });
    const { client, close } = await connectInMemory(service);
    const task = await createTask(client, "a day out");
    await service.wait(task.taskId, 120);
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled.status).toBe("cancelled");
    expect((await service.status(task.taskId)).status).toBe("stopped");
    await expect(client.experimental.tasks.getTask("nothing--weather")).rejects.toThrow("Task not found");
    expect(await service.resume(task.taskId)).toEqual({ plan_id: task.taskId, status: "running" });
    await service.settled();
    await close();
  });

  it("a refused create makes no task: a protocol error carrying the usual { error, message, path }", async () => {
    const service = served();
    const { client, close } = await connectInMemory(service);
    const refused = await client
      .request(
        { method: "tools/call", params: { name: "plan_create", arguments: { goal: "g", graph: "nope" }, task: {} } },
        CreateTaskResultSchema,
      )
      .catch((error: unknown) => error as { code: number; data: unknown });
    expect(refused).toMatchObject({
      code: -32602,
      data: { error: "invalid_input", message: 'no graph "nope" (served: weather)', path: "graph" },
    });
    expect((await client.experimental.tasks.listTasks()).tasks).toEqual([]);
    await close();
  });
});

describe("langgraph-replan mcp: a task outlives its server (SQLite)", () => {
  it("a task made on one server is read, and its result waited for, on the next one started on the file", async () => {
    const db = join(dir, "served.sqlite");
    const gate = join(dir, "gate");
    const env = { LANGGRAPH_CLI_NO_ANALYTICS: "1", MCP_TEST_GATE: gate };
    const first = await startStdio({ db, config: "test/fixtures/mcp/langgraph.json", env });
    const task = await createTask(first.client, "a day out");
    expect(task.status).toBe("working");
    await first.client.close();
    const second = await startStdio({ db, config: "test/fixtures/mcp/langgraph.json", env });
    try {
      expect((await second.client.experimental.tasks.getTask(task.taskId)).taskId).toBe(task.taskId);
      writeFileSync(gate, "open");
      const result = await second.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      expect(result.structuredContent).toMatchObject({ plan_id: task.taskId, status: "completed" });
      expect((await second.client.experimental.tasks.listTasks()).tasks.map((t) => [t.taskId, t.status])).toEqual([
        [task.taskId, "completed"],
      ]);
    } finally {
      await second.client.close();
    }
  }, 120_000);
});

describe("langgraph-replan mcp --http: tasks over Streamable HTTP", () => {
  it("plan_create as a task, and its result waited for, from a client that connects again", async () => {
    const { child, url } = await startHttp(
      mcpArgs(join(dir, "served.sqlite"), "test/fixtures/mcp/langgraph.json", "--http", "127.0.0.1:0"),
    );
    const connect = async () => {
      const client = new Client({ name: "http-agent", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      return client;
    };
    try {
      const one = await connect();
      const task = await createTask(one, "over http");
      expect(task.taskId).toMatch(/--weather$/);
      await one.close();
      const two = await connect();
      const result = await two.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      expect(result.structuredContent).toMatchObject({ plan_id: task.taskId, status: "completed" });
      expect((await two.experimental.tasks.getTask(task.taskId)).status).toBe("completed");
      await two.close();
    } finally {
      child.kill("SIGTERM");
    }
  }, 120_000);
});
