/**
 * The complete examples of README.md and the guides run as written: each block marked
 * `<!-- prints: [...] -->` runs in its own process (the package's imports pointed at the sources)
 * and prints exactly those lines, with nothing on stderr. So do the runnable examples README.md shows
 * the output of.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { allTsBlocks, readDoc, root, withSourceImports } from "./docs-markdown.js";

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

/** Examples under examples/ whose printed lines README.md shows, with those lines. */
const examples: [file: string, prints: string[]][] = [
  [
    "examples/mcp-agent/session.ts",
    [
      "→ plan_create as a task: working, task id = plan id …--plans",
      '← sampling/createMessage: a plan for "publish the 2.4 release notes"; the model answers with 2 steps',
      '← tasks/get: input_required — external step "write" is yours to do (plan_next, then plan_submit): write the 2.4 notes from CHANGELOG.md; submit { notes }',
      "→ plan_next: write, attempt 1, produces notes",
      "→ plan_submit write: running",
      '← elicitation/create: step "sign_off" needs a person: sign the notes off',
      "  tasks/get meanwhile: input_required",
      '  the user accepts: {"action":"complete","approved":"true"}',
      "← tasks/get: completed",
      "← tasks/result: completed, 2 of 2 steps (write succeeded, sign_off succeeded)",
    ],
  ],
];

describe("runnable examples", () => {
  it.each(examples)(
    "%s prints what README.md says",
    (file, prints) => {
      const options = { cwd: root, encoding: "utf8", timeout: 230_000 } as const;
      const run = spawnSync(process.execPath, ["--import", "tsx", file], options);
      expect(run.stderr.replace(/npm warn.*\n/g, "")).toBe("");
      expect(run.stdout.trimEnd().split("\n")).toEqual(prints);
      expect(readDoc("README.md")).toContain(["```", ...prints, "```"].join("\n"));
    },
    // Two processes (the example and the server it spawns), each loading the sources through tsx.
    240_000,
  );
});
