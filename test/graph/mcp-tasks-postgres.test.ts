/**
 * Plans as MCP tasks on PostgreSQL (docs/decisions/0048-plans-as-mcp-tasks.md): the task store is
 * the checkpoints, so a task made on one `langgraph-replan mcp --db postgresql://…` server is read,
 * listed and its result waited for on the next server started on the same database, after the
 * first was closed with its run in flight. PostgreSQL is started on 127.0.0.1 by the test.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPostgres, type PgServer } from "../../test-reliability/helpers/postgres.js";
import { startStdio, until } from "../helpers/mcp.js";

let pg: PgServer;
let dir: string;

beforeAll(async () => {
  pg = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-pg-"));
}, 120_000);

afterAll(() => {
  pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** `plan_create` called as a task: the SDK client's own request, with `task` set. */
async function createTask(client: Client, goal: string) {
  const created = await client.request(
    { method: "tools/call", params: { name: "plan_create", arguments: { goal }, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task;
}

describe("langgraph-replan mcp: a task outlives its server (PostgreSQL)", () => {
  it("a task made on one server is read, listed and its result waited for on the next one started on the database", async () => {
    const gate = join(dir, "gate");
    const env = { LANGGRAPH_CLI_NO_ANALYTICS: "1", MCP_TEST_GATE: gate };
    const config = "test/fixtures/mcp/langgraph.json";
    const first = await startStdio({ db: pg.url, config, env });
    const task = await createTask(first.client, "a day out");
    expect(task.status).toBe("working");
    expect(task.taskId).toMatch(/^[0-9a-f]{32}--weather$/);
    // The first step is in flight when the server goes: closed, then killed by the SDK.
    await until(`${gate}.reached`);
    await first.client.close();
    expect(existsSync(gate)).toBe(false);

    const second = await startStdio({ db: pg.url, config, env });
    try {
      const got = await second.client.experimental.tasks.getTask(task.taskId);
      expect(got).toMatchObject({ taskId: task.taskId, status: "working" });
      writeFileSync(gate, "open");
      const result = await second.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      expect(result.structuredContent).toMatchObject({
        plan_id: task.taskId,
        status: "completed",
        progress: { done: 2, total: 2 },
      });
      expect((await second.client.experimental.tasks.getTask(task.taskId)).status).toBe("completed");
      expect((await second.client.experimental.tasks.listTasks()).tasks.map((t) => [t.taskId, t.status])).toEqual([
        [task.taskId, "completed"],
      ]);
    } finally {
      await second.client.close();
    }
  }, 300_000);
});
