import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const dir = mkdtempSync(join(tmpdir(), "demo-flags-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const USAGE =
  'usage: npm run demo -- [--interactive] [--llm] [--db FILE] [--applicant ID] [--scope "REQUEST"] [--report FILE.html] | --migration';

function demo(...args: string[]) {
  const env = { ...process.env };
  delete env.OPENAI_API_KEY;
  const run = spawnSync(process.execPath, ["--import", "tsx", "examples/loan/demo.ts", ...args], {
    cwd: root,
    encoding: "utf8",
    env,
    timeout: 60_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe("demo flags", () => {
  it.each([
    [["--scope"], "demo: --scope needs a value"],
    [["--report", "--llm"], "demo: --report needs a value"],
    [["--db"], "demo: --db needs a value"],
    [["--applicant", "--scope", "x"], "demo: --applicant needs a value"],
    [["--bogus"], 'demo: unknown argument "--bogus"'],
  ])("%j fails with a usage message and exit code 2", (args, problem) => {
    const run = demo(...args);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(`${problem}\n${USAGE}\n`);
    expect(run.stdout).toBe("");
  });

  it("--llm without OPENAI_API_KEY says it uses the static planner, and why", () => {
    const run = demo("--llm", "--db", join(dir, "d.sqlite"));
    expect(run.status).toBe(0);
    const db = relative(root, join(dir, "d.sqlite"));
    expect(run.stdout.split("\n")[1]).toBe(
      `planner: static (OPENAI_API_KEY is not set: using the static planner) · checkpointer: SQLite (${db})`,
    );
  });

  it("--migration runs the long-goal demo: 40 tables, 8 extensions, a local replan and a stall", () => {
    const run = demo("--migration");
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines[0]).toBe("langgraph-replan demo — migrating 40 tables, planned 5 steps at a time");
    expect(lines.filter((l) => l.startsWith("⚠ "))).toEqual([
      "⚠ Migrating table 27 of 40: still running after 450 ms (estimate 100 ms)",
    ]);
    expect(lines.slice(-2)).toEqual([
      "Plan v10: 40 steps, 8 extensions, 1 replan, 1 stalled step",
      'Final status: completed — Completed "Migrate the orders database": 40 of 40 steps succeeded after 1 replan and 8 extensions (plan v10).',
    ]);
  });
});
