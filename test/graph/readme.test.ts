import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { MCP_USAGE, runMcp } from "../../src/cli/mcp-command.js";

const root = resolve(import.meta.dirname, "..", "..");

describe("README", () => {
  it("runs the quickstart as written and prints what it promises", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Quickstart"));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code).toBeDefined();
    const dir = mkdtempSync(join(root, "test", ".readme-"));
    try {
      const file = join(dir, "quickstart.ts");
      writeFileSync(
        file,
        code!.replace('from "langgraph-replan"', `from ${JSON.stringify(join(root, "src/index.ts"))}`),
      );
      const run = spawnSync(process.execPath, ["--import", "tsx", file], { cwd: root, encoding: "utf8" });
      expect(run.stderr.replace(/npm warn.*\n/g, "")).toBe("");
      expect(run.stdout.trim().split("\n")).toEqual(["completed", "1.08", "transient.retry"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ["### Evidence freshness", ["completed", "evidence.stale", "101"]],
    ["### Assumption drift", ["completed", "assumption.drift", 'price_ok held=false: {"price":130}', "135"]],
  ])("runs the example under %s as written and prints what it promises", (heading, printed) => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf(heading));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code).toBeDefined();
    const dir = mkdtempSync(join(root, "test", ".readme-"));
    try {
      const file = join(dir, "quality.ts");
      writeFileSync(
        file,
        code!.replace('from "langgraph-replan"', `from ${JSON.stringify(join(root, "src/index.ts"))}`),
      );
      const run = spawnSync(process.execPath, ["--import", "tsx", file], { cwd: root, encoding: "utf8" });
      expect(run.stderr.replace(/npm warn.*\n/g, "")).toBe("");
      expect(run.stdout.trim().split("\n")).toEqual(printed);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs the createAgent example as written and prints what it promises", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Inside createAgent"));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code).toBeDefined();
    const dir = mkdtempSync(join(root, "test", ".readme-"));
    try {
      const file = join(dir, "agent.ts");
      writeFileSync(
        file,
        code!
          .replace('from "langgraph-replan/agent"', `from ${JSON.stringify(join(root, "src/middleware/index.ts"))}`)
          .replace('from "langgraph-replan"', `from ${JSON.stringify(join(root, "src/index.ts"))}`),
      );
      const run = spawnSync(process.execPath, ["--import", "tsx", file], { cwd: root, encoding: "utf8" });
      expect(run.stderr.replace(/npm warn.*\n/g, "")).toBe("");
      expect(run.stdout.trim().split("\n")).toEqual(["completed", "1.08", "transient.retry"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs the ScriptedChatModel example as written and prints what it promises", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("### Testing offline: `ScriptedChatModel`"));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code).toBeDefined();
    const dir = mkdtempSync(join(root, "test", ".readme-"));
    try {
      const file = join(dir, "scripted.ts");
      writeFileSync(
        file,
        code!
          .replace('from "langgraph-replan/agent"', `from ${JSON.stringify(join(root, "src/middleware/index.ts"))}`)
          .replace('from "langgraph-replan/testing"', `from ${JSON.stringify(join(root, "src/testing/index.ts"))}`),
      );
      const run = spawnSync(process.execPath, ["--import", "tsx", file], { cwd: root, encoding: "utf8" });
      expect(run.stderr.replace(/npm warn.*\n/g, "")).toBe("");
      expect(run.stdout.trim().split("\n")).toEqual(["completed", "40", "3", "The desk costs 40."]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives MCP client configurations a client can read: our command with flags it takes, and a URL at /mcp", async () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("### Connecting a client"), readme.indexOf("### An agent session"));
    const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!));
    expect(blocks).toHaveLength(2);
    const stdio = blocks[0].mcpServers.plans as { command: string; args: string[] };
    expect([stdio.command, ...stdio.args.slice(0, 2)]).toEqual(["npx", "langgraph-replan", "mcp"]);
    // The flags parse as the command's own (an unknown one would throw); --help stops before anything opens.
    const out: string[] = [];
    const io = { out: (l: string) => out.push(l), err: () => undefined, now: () => 0, sleep: async () => undefined };
    expect(await runMcp([...stdio.args.slice(2), "--help"], io)).toBe(0);
    expect(out).toEqual([MCP_USAGE]);
    expect(blocks[1].mcpServers.plans.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it("runs the quality gate example as written and prints what it promises", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Quality gates"));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code).toBeDefined();
    const dir = mkdtempSync(join(root, "test", ".readme-"));
    try {
      const file = join(dir, "quality.ts");
      writeFileSync(
        file,
        code!.replace('from "langgraph-replan"', `from ${JSON.stringify(join(root, "src/index.ts"))}`),
      );
      const run = spawnSync(process.execPath, ["--import", "tsx", file], { cwd: root, encoding: "utf8" });
      expect(run.stderr.replace(/npm warn.*\n/g, "")).toBe("");
      expect(run.stdout.trim().split("\n")).toEqual(["awaiting_review", "quality.estimate-bounds", "completed", "1"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
