/**
 * The complete examples of README.md and the guides run as written: each block marked
 * `<!-- prints: [...] -->` runs in its own process (the package's imports pointed at the sources)
 * and prints exactly those lines, with nothing on stderr.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { allTsBlocks, root, withSourceImports } from "./docs-markdown.js";

const runnable = allTsBlocks().filter((b) => b.prints !== undefined);

describe("README and guides examples", () => {
  it("marks the complete examples: the quickstart, createAgent, ScriptedChatModel, the quality gates, a person, an undo and a held replan", () => {
    const where = (file: string) => runnable.filter((b) => b.file === file).length;
    expect([
      where("README.md"),
      where("docs/guides/plan-and-run.md"),
      where("docs/guides/create-agent.md"),
      where("docs/guides/quality-gates.md"),
      where("docs/guides/human-review.md"),
      where("docs/guides/side-effects.md"),
      where("docs/guides/security.md"),
    ]).toEqual([2, 1, 2, 3, 1, 1, 1]);
  });

  it.each(runnable.map((b) => [`${b.file}:${b.line}`, b] as const))(
    "runs the example at %s and prints what it says",
    (_, block) => {
      const dir = mkdtempSync(join(root, "test", ".readme-"));
      try {
        const file = join(dir, "example.ts");
        writeFileSync(file, withSourceImports(block.code));
        const run = spawnSync(process.execPath, ["--import", "tsx", file], { cwd: root, encoding: "utf8" });
        expect(run.stderr.replace(/npm warn.*\n/g, "")).toBe("");
        expect(run.stdout.trim().split("\n")).toEqual(block.prints);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
