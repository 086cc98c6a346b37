/**
 * README's "Install" lines, run against the packed package: built, `npm pack`ed and unpacked into
 * a fresh project per line, whose node_modules holds only what the first line and that line name
 * (linked from this checkout; no network). Each line's promise is then used from that project:
 * the README's Quickstart and createAgent examples as written, the subpaths each line names, and
 * the command on a SQLite file. Every line must have a check here, so a new one cannot go untested.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..");
const scratch = mkdtempSync(join(tmpdir(), "install-"));
const readme = readFileSync(join(root, "README.md"), "utf8");
const tsx = pathToFileURL(join(root, "node_modules", "tsx", "dist", "loader.mjs")).href;

interface Line {
  dev: boolean;
  packages: string[];
}

/** The `npm install` lines of README's Install section, in order. */
function installLines(): Line[] {
  const section = readme.slice(readme.indexOf("## Install\n"));
  const block = /```bash\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  return block
    .split("\n")
    .map((line) => line.replace(/#.*$/, "").trim())
    .filter(Boolean)
    .map((line) => {
      const words = line.split(/\s+/);
      expect(words.slice(0, 2)).toEqual(["npm", "install"]);
      const rest = words.slice(2);
      return { dev: rest.includes("-D"), packages: rest.filter((w) => !w.startsWith("-")) };
    });
}

/** The first ```ts block after a README heading. */
function example(heading: string): string {
  const code = /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf(heading)))?.[1];
  expect(code).toBeDefined();
  return code!;
}

let tarball = "";
const lines = installLines();
const base = lines[0]!;

/** A fresh project holding the packed package and what `extra` lines name, and nothing else. */
function project(name: string, ...extra: Line[]): string {
  const dir = join(scratch, name);
  const target = join(dir, "node_modules", "langgraph-replan");
  mkdirSync(target, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, private: true, type: "module" }));
  execFileSync("tar", ["xzf", tarball, "-C", target, "--strip-components=1"]);
  // npm installs the package's own dependencies with it (read from package.json, so a new one cannot be missed).
  const own = Object.keys(
    (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { dependencies: Record<string, string> })
      .dependencies,
  );
  const named = [base, ...extra].flatMap((l) => l.packages).filter((p) => p !== "langgraph-replan");
  for (const pkg of new Set([...own, ...named])) {
    const from = join(root, "node_modules", pkg);
    expect(existsSync(from), `${pkg} is not installed in this checkout`).toBe(true);
    mkdirSync(dirname(join(dir, "node_modules", pkg)), { recursive: true });
    symlinkSync(from, join(dir, "node_modules", pkg), "dir");
  }
  return dir;
}

/** Runs `code` (TypeScript, as a user's file) in `dir`; stdout lines, and stderr. */
function run(dir: string, code: string, file = "main.ts") {
  writeFileSync(join(dir, file), code);
  const child = spawnSync(process.execPath, ["--import", tsx, file], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  return { code: child.status, out: child.stdout.trim().split("\n"), err: child.stderr.trim() };
}

/** For each specifier, "ok" when it loads in `dir`, or the code of the error it fails with (one process). */
function loads(dir: string, ...specifiers: string[]): string[] {
  const probe = specifiers
    .map((s) => `console.log(await import(${JSON.stringify(s)}).then(() => "ok", (e) => e.code ?? e.message));`)
    .join("\n");
  return run(dir, probe, "probe.ts").out;
}

const line = (pkg: string): Line => {
  const found = lines.find((l) => l !== base && l.packages.includes(pkg));
  expect(found, `README's Install has no line with ${pkg}`).toBeDefined();
  return found!;
};

beforeAll(() => {
  execFileSync("npm", ["run", "build"], { cwd: root, stdio: "pipe" });
  const name = execFileSync("npm", ["pack", "--pack-destination", scratch], { cwd: root, encoding: "utf8" })
    .trim()
    .split("\n")
    .pop()!;
  tarball = join(scratch, name);
}, 300_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("README's Install, line by line, against the packed package", () => {
  it("has a check below for every line", () => {
    expect(base.packages[0]).toBe("langgraph-replan");
    const checked = [
      "langchain",
      "@langchain/langgraph-checkpoint-sqlite",
      "pg-boss",
      "mermaid",
      "@langchain/langgraph-cli",
    ];
    expect(lines.slice(1).map((l) => l.packages.find((p) => checked.includes(p)) ?? l.packages.join(" "))).toEqual(
      checked,
    );
  });

  it("the first line: the Quickstart as written; /policy, /views and /testing load, /agent and /worker do not", () => {
    const dir = project("base");
    expect(run(dir, example("## Quickstart"))).toEqual({
      code: 0,
      out: ["completed", "1.08", "transient.retry"],
      err: "",
    });
    const subpaths = ["", "/policy", "/views", "/testing", "/agent", "/worker"].map((s) => `langgraph-replan${s}`);
    expect(loads(dir, ...subpaths)).toEqual(["ok", "ok", "ok", "ok", "ERR_MODULE_NOT_FOUND", "ERR_MODULE_NOT_FOUND"]);
    // The scripted chat model answers from its script, with no test framework installed.
    const testing = run(
      dir,
      `import { ScriptedChatModel } from "langgraph-replan/testing";
const model = new ScriptedChatModel(["first", { plan: 1 }]);
console.log((await model.invoke("a")).content);
console.log((await model.invoke("b")).content);
console.log(model.received.length);`,
    );
    expect(testing).toEqual({ code: 0, out: ["first", '{"plan":1}', "2"], err: "" });
  });

  it("+ langchain: the createAgent example as written", () => {
    const dir = project("agent", line("langchain"));
    expect(run(dir, example("## Inside createAgent"))).toEqual({
      code: 0,
      out: ["completed", "1.08", "transient.retry"],
      err: "",
    });
  });

  it("+ the SQLite checkpointer: a run checkpointed to a file, and the command reads it", () => {
    const dir = project("sqlite", line("@langchain/langgraph-checkpoint-sqlite"));
    const made = run(
      dir,
      `import { tool } from "@langchain/core/tools";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { z } from "zod";
import { createPlanManager, staticPlanner } from "langgraph-replan";
const echo = tool(async () => ({ v: 1 }), { name: "echo", description: "echo", schema: z.object({}) });
const plan = { steps: [{ id: "a", goal: "Fetch", tool: "echo", args: {}, produces: ["v"] }] };
const saver = SqliteSaver.fromConnString("runs.sqlite");
const graph = createPlanManager({ tools: [echo], planner: staticPlanner({ plan }) }).compile({ checkpointer: saver });
console.log((await graph.invoke({ goal: "fetch v" }, { configurable: { thread_id: "t" } })).status);`,
    );
    expect(made).toEqual({ code: 0, out: ["completed"], err: "" });
    const bin = join(dir, "node_modules", "langgraph-replan", "dist", "cli", "main.js");
    const threads = spawnSync(process.execPath, [bin, "threads", "runs.sqlite"], { cwd: dir, encoding: "utf8" });
    expect([threads.status, threads.stderr]).toEqual([0, ""]);
    expect(threads.stdout).toMatch(/^t {2}completed/);
  });

  it("+ the PostgreSQL packages: langgraph-replan/worker loads", () => {
    const dir = project("worker", line("pg-boss"));
    expect(loads(dir, "langgraph-replan/worker")).toEqual(["ok"]);
  });

  it("+ mermaid: the command's report has its diagrams drawn by the bundle written beside it", () => {
    const dir = project("mermaid", line("@langchain/langgraph-checkpoint-sqlite"), line("mermaid"));
    const made = run(
      dir,
      `import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createPlanManager, staticPlanner } from "langgraph-replan";
const plan = { steps: [{ id: "ask", goal: "A person checks it", human: { prompt: "ok?" } }] };
const saver = SqliteSaver.fromConnString("runs.sqlite");
const graph = createPlanManager({ tools: [], planner: staticPlanner({ plan }) }).compile({ checkpointer: saver });
console.log((await graph.invoke({ goal: "check" }, { configurable: { thread_id: "t" } })).status);`,
    );
    expect(made).toEqual({ code: 0, out: ["awaiting_human"], err: "" });
    const bin = join(dir, "node_modules", "langgraph-replan", "dist", "cli", "main.js");
    const report = spawnSync(process.execPath, [bin, "report", "runs.sqlite", "t", "-o", "t.html"], {
      cwd: dir,
      encoding: "utf8",
    });
    expect([report.status, report.stderr]).toEqual([0, ""]);
    expect(report.stdout).toMatch(/^wrote t\.html \(\d+ bytes\) and, beside it, mermaid\.min\.js \(\d+ bytes\)\n$/);
    expect(readFileSync(join(dir, "t.html"), "utf8")).toContain('<script src="mermaid.min.js"></script>');
  });

  it("+ the LangGraph CLI (a dev dependency): its langgraphjs command is there", () => {
    const cli = line("@langchain/langgraph-cli");
    expect(cli.dev).toBe(true);
    const dir = project("studio", cli);
    const pkg = JSON.parse(
      readFileSync(join(dir, "node_modules", "@langchain", "langgraph-cli", "package.json"), "utf8"),
    ) as { bin: Record<string, string> };
    expect(Object.keys(pkg.bin)).toContain("langgraphjs");
  });
});
