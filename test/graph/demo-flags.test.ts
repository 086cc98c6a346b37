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
  'usage: npm run demo -- [--interactive] [--llm] [--db FILE] [--applicant ID] [--scope "REQUEST"] [--report FILE.html] | --migration | --coding';

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

  it("--coding: a step fails its tests, moves one tier up, is retried with the test output, and lands; cost per tier", () => {
    const run = demo("--coding");
    expect(run.status).toBe(0);
    expect(run.stdout.split("\n").filter((l) => l !== "")).toEqual([
      "langgraph-replan demo — a coding agent fixes issue #42 (scripted models: fast, default, strong)",
      "✓ Reading the issue (attempt 1)",
      '✗ Fixing parse() (attempt 1): validation tool "run_tests" failed: test_parse_last_token failed: expected 3 tokens, got 2 (patch: for (i = 1; i < tokens.length; i++))',
      "  → route.escalate-tier: attempt 2/3 runs one tier up (fast → default) with its previous answer and why it failed",
      '✗ Fixing parse() (attempt 2): validation tool "run_tests" failed: test_parse_last_token failed: expected 3 tokens, got 2 (patch: for (i = 0; i < tokens.length - 1; i++))',
      "  → agent.retry-with-feedback: attempt 3/3 with its previous answer and why it failed",
      "✓ Fixing parse() (attempt 3)",
      "✓ Writing the changelog entry (attempt 1)",
      "Cost per tier:",
      "  fast     3 calls  $0.0032",
      "  default  2 calls  $0.0105",
      'Final status: completed — Completed "Fix issue #42: parse() drops the last token": 3 of 3 steps succeeded (plan v1).',
    ]);
  });
});
