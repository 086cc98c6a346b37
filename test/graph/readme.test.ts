import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

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
