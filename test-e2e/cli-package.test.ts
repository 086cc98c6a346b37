/**
 * The packed `langgraph-replan` command in a project without PostgreSQL's packages: built,
 * `npm pack`ed, unpacked into a temporary project whose node_modules holds only what a SQLite
 * user installs (the package's dependencies and its SQLite peers, linked from this checkout; no
 * network). Every command works on a SQLite file; a postgresql:// URL names the package to
 * install and exits 2.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { tool } from "@langchain/core/tools";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createPlanManager, staticPlanner } from "../src/index.js";
import { htmlReport } from "../src/views/index.js";

const root = resolve(import.meta.dirname, "..");
const project = mkdtempSync(join(tmpdir(), "cli-package-"));
const db = join(project, "checkpoints.sqlite");
/** What a SQLite user installs: the package's dependencies (read from package.json, so a new one cannot be missed) and its SQLite peers. */
const INSTALLED = [
  ...Object.keys(
    (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { dependencies: Record<string, string> })
      .dependencies,
  ),
  "@langchain/core",
  "@langchain/langgraph",
  "@langchain/langgraph-checkpoint-sqlite",
  "better-sqlite3",
];

const bin = join(project, "node_modules", "langgraph-replan", "dist", "cli", "main.js");
const cli = (...args: string[]) => {
  const run = spawnSync(process.execPath, [bin, ...args], { cwd: project, encoding: "utf8" });
  return { code: run.status, out: run.stdout.trim().split("\n"), err: run.stderr.trim() };
};

beforeAll(async () => {
  execFileSync("npm", ["run", "build"], { cwd: root, stdio: "pipe" });
  const tarball = execFileSync("npm", ["pack", "--pack-destination", project], { cwd: root, encoding: "utf8" })
    .trim()
    .split("\n")
    .pop()!;
  const target = join(project, "node_modules", "langgraph-replan");
  mkdirSync(target, { recursive: true });
  execFileSync("tar", ["xzf", join(project, tarball), "-C", target, "--strip-components=1"]);
  for (const name of INSTALLED) {
    mkdirSync(dirname(join(project, "node_modules", name)), { recursive: true });
    symlinkSync(join(root, "node_modules", name), join(project, "node_modules", name), "dir");
  }
  const echo = tool(async () => ({ v: 1 }), { name: "echo", description: "echo", schema: z.object({}) });
  const plan = {
    steps: [
      { id: "a", goal: "Fetch", tool: "echo", args: {}, produces: ["v"] },
      { id: "ask", goal: "A person checks it", human: { prompt: "is v right?" }, dependsOn: ["a"] },
    ],
  };
  const saver = SqliteSaver.fromConnString(db);
  const graph = createPlanManager({ tools: [echo], planner: staticPlanner({ plan }) }).compile({ checkpointer: saver });
  await graph.invoke({ goal: "check a record" }, { configurable: { thread_id: "t" } });
  saver.db.close();
}, 300_000);
afterAll(() => rmSync(project, { recursive: true, force: true }));

describe("the packed command without pg, pg-boss or the PostgreSQL checkpointer", () => {
  it("the project really lacks them", () => {
    const resolves = (name: string) =>
      spawnSync(process.execPath, ["-e", `import.meta.resolve(${JSON.stringify(name)})`, "--input-type=module"], {
        cwd: project,
      }).status === 0;
    expect(["pg", "pg-boss", "@langchain/langgraph-checkpoint-postgres", "mermaid"].map(resolves)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it("threads, show and stop work on a SQLite file", () => {
    expect(cli("threads", db)).toMatchObject({
      code: 0,
      err: "",
      out: [expect.stringMatching(/^t {2}awaiting_human/)],
    });
    expect(cli("show", db, "t", "--view", "user")).toMatchObject({ code: 0, err: "" });
    expect(cli("stop", db, "t")).toEqual({
      code: 0,
      err: "",
      out: [`stopped "t" (it was awaiting_human); carry on with: langgraph-replan resume ${db} t`],
    });
  });

  it("report without mermaid installed: htmlReport's page, and the line says how to get diagrams", async () => {
    const file = join(project, "t.html");
    const run = cli("report", db, "t", "-o", file);
    const html = readFileSync(file, "utf8");
    expect(run).toEqual({
      code: 0,
      err: "",
      out: [
        `wrote ${file} (${Buffer.byteLength(html)} bytes); diagrams are shown as Mermaid source: ` +
          "npm install mermaid to draw them",
      ],
    });
    const saver = SqliteSaver.fromConnString(db);
    const state = await createPlanManager({ tools: [], planner: staticPlanner({ plan: { steps: [] } }) })
      .compile({ checkpointer: saver })
      .getState({ configurable: { thread_id: "t" } });
    saver.db.close();
    expect(html).toBe(htmlReport(state.values as never));
  });

  it("a postgresql:// URL names the missing package and exits 2", () => {
    expect(cli("threads", "postgresql://someone@127.0.0.1:1/db")).toEqual({
      code: 2,
      out: [""],
      err:
        'langgraph-replan: a postgresql:// URL needs the package "@langchain/langgraph-checkpoint-postgres", ' +
        "which is not installed: npm install @langchain/langgraph-checkpoint-postgres",
    });
  });
});
