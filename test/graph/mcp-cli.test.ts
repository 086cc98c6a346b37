/**
 * `langgraph-replan mcp` as a new user starts it: before a `langgraph.json` exists, with a graph
 * exported uncompiled (`createPlanManager(...)`, as `langgraph dev` takes it), with a misspelled
 * export, and with the `langgraph.json` the README shows. Each server is a child process over stdio.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..", "..");
const fixture = join(root, "test/fixtures/mcp-cli/graph.ts");
const env = { PATH: process.env.PATH ?? "", LANGGRAPH_CLI_NO_ANALYTICS: "1" };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-cli-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const mcpArgs = (db: string, configPath: string) => [
  "--import",
  "tsx",
  join(root, "src/cli/main.ts"),
  "mcp",
  "--db",
  db,
  "--config",
  configPath,
];

/** A langgraph.json in `where` naming `graphs`; its path. */
function config(graphs: Record<string, string>, where = dir): string {
  const path = join(where, "langgraph.json");
  writeFileSync(path, JSON.stringify({ graphs }));
  return path;
}

/** Starts the server over stdio, runs one plan to its end, and closes; what stderr said. */
async function runOnePlan(db: string, configPath: string): Promise<{ status: unknown; stderr: string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: mcpArgs(db, configPath),
    cwd: root,
    env,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "new-user", version: "1" });
  await client.connect(transport);
  try {
    const created = (await client.callTool({ name: "plan_create", arguments: { goal: "a day out" } })) as any;
    expect(created.isError).toBeUndefined();
    const done = (await client.callTool({
      name: "plan_wait",
      arguments: { plan_id: created.structuredContent.plan_id, timeout_s: 60 },
    })) as any;
    return { status: done.structuredContent.status, stderr };
  } finally {
    await client.close();
  }
}

const checkpointsIn = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM checkpoints").get() as { n: number }).n;
  } finally {
    db.close();
  }
};

describe("mcp: the first start", () => {
  it("a start that fails before its graphs load leaves no database; a 0-byte file is taken as a new one", async () => {
    const db = join(dir, "plans.sqlite");
    const missing = spawnSync(process.execPath, mcpArgs(db, join(dir, "langgraph.json")), {
      cwd: root,
      env,
      encoding: "utf8",
    });
    expect([missing.status, missing.stderr.trim()]).toEqual([
      1,
      `langgraph-replan: no such file: ${join(dir, "langgraph.json")} (give --config PATH/langgraph.json)`,
    ]);
    expect(existsSync(db)).toBe(false);

    // What an earlier version (or a crash at the wrong moment) left behind.
    writeFileSync(db, "");
    const { status } = await runOnePlan(db, config({ day: `${fixture}:graph` }));
    expect(status).toBe("completed");
    expect(statSync(db).size).toBeGreaterThan(0);
    expect(checkpointsIn(db)).toBeGreaterThan(0);
  }, 60_000);
});

describe("mcp: the graphs of langgraph.json", () => {
  it("serves createPlanManager(...) left uncompiled, compiled with the --db checkpointer", async () => {
    const db = join(dir, "plans.sqlite");
    const { status, stderr } = await runOnePlan(db, config({ day: `${fixture}:builder` }));
    expect(status).toBe("completed");
    expect(stderr).not.toContain("not a plan manager");
    expect(stderr).toContain("serving day over stdio");
    expect(checkpointsIn(db)).toBeGreaterThan(0);
  }, 60_000);

  it("a misspelled export is named, with the exports the file has; nothing is opened", () => {
    const db = join(dir, "plans.sqlite");
    const configPath = config({ day: `${fixture}:buidler` });
    const run = spawnSync(process.execPath, mcpArgs(db, configPath), { cwd: root, env, encoding: "utf8" });
    expect([run.status, run.stderr.trim()]).toEqual([
      1,
      `langgraph-replan: graph "day" in ${configPath}: no export "buidler" in ${fixture} (its exports: builder, graph)`,
    ]);
    expect(existsSync(db)).toBe(false);
  }, 60_000);

  it("serves the README's own graph through the README's langgraph.json, as printed", async () => {
    const readme = readFileSync(join(root, "docs/guides/mcp.md"), "utf8");
    const section = readme.slice(readme.indexOf("### Serving your own graph"));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    const json = /```json\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code).toBeDefined();
    expect(json).toBeDefined();
    const graphs = (JSON.parse(json!) as { graphs: Record<string, string> }).graphs;
    expect(Object.keys(graphs)).toEqual(["planner"]);
    // The project folder holds src/graph.ts beside langgraph.json, as the README lays it out.
    const project = mkdtempSync(join(root, "test", ".readme-mcp-"));
    try {
      mkdirSync(join(project, "src"));
      writeFileSync(
        join(project, "src/graph.ts"),
        code!.replace('from "langgraph-replan"', `from ${JSON.stringify(join(root, "src/index.ts"))}`),
      );
      writeFileSync(join(project, "langgraph.json"), json!);
      const { status, stderr } = await runOnePlan(join(dir, "plans.sqlite"), join(project, "langgraph.json"));
      expect(status).toBe("completed");
      expect(stderr).toContain("serving planner over stdio");
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  }, 60_000);
});
