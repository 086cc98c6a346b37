/**
 * The MCP Inspector's command line, as a user runs it against `langgraph-replan mcp`:
 * `npx @modelcontextprotocol/inspector --cli <our command> --method tools/list` (the Inspector is a
 * dev dependency: no network). The server runs in the fixture's folder, so it reads the
 * langgraph.json there by default — the Inspector takes `--config` for itself.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..");
const dir = mkdtempSync(join(tmpdir(), "mcp-inspector-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let runs = 0;
function inspect(...method: string[]) {
  const run = spawnSync(
    "npx",
    [
      "--no-install",
      "@modelcontextprotocol/inspector",
      "--cli",
      process.execPath,
      "--import",
      "tsx",
      join(root, "src/cli/main.ts"),
      "mcp",
      "--db",
      join(dir, `plans-${++runs}.sqlite`),
      ...method,
    ],
    {
      cwd: join(root, "test/fixtures/mcp"),
      encoding: "utf8",
      env: { ...process.env, LANGGRAPH_CLI_NO_ANALYTICS: "1" },
      timeout: 90_000,
    },
  );
  return { code: run.status, out: run.stdout, err: run.stderr };
}

describe("the MCP Inspector's command line", () => {
  it("lists the planning service's tools, each with an input and an output schema", () => {
    const run = inspect("--method", "tools/list");
    expect({ code: run.code, err: run.code === 0 ? "" : run.err }).toEqual({ code: 0, err: "" });
    const { tools } = JSON.parse(run.out) as {
      tools: { name: string; inputSchema?: { type: string }; outputSchema?: { type: string } }[];
    };
    expect(tools.map((t) => t.name).sort()).toEqual([
      "plan_answer",
      "plan_archive",
      "plan_create",
      "plan_delete",
      "plan_list",
      "plan_next",
      "plan_report",
      "plan_resume",
      "plan_status",
      "plan_stop",
      "plan_submit",
      "plan_wait",
    ]);
    expect(tools.filter((t) => t.inputSchema?.type !== "object" || t.outputSchema?.type !== "object")).toEqual([]);
  });

  it("calls a tool: an unknown plan is an error result naming its code", () => {
    const run = inspect("--method", "tools/call", "--tool-name", "plan_status", "--tool-arg", "plan_id=nope--weather");
    expect({ code: run.code, err: run.code === 0 ? "" : run.err }).toEqual({ code: 0, err: "" });
    const result = JSON.parse(run.out) as { isError?: boolean; content: { type: string; text: string }[] };
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content[0]!.text)).toMatchObject({ error: "invalid_input" });
  });
});
