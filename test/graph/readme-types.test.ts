import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..", "..");

/** A ```ts block of the README: the line its code starts on, its code, and the declarations a fragment assumes. */
interface Block {
  line: number;
  code: string;
  /** For a fragment: the names it uses from the text around it, declared (from its `<!-- fragment: … -->`). */
  assumes: string;
}

/**
 * Every ```ts block of the README. A block that continues the text around it (it uses `tools`, `planner`,
 * `checkpointer` the reader already has) says so just above it with `<!-- fragment: … -->` holding the
 * declarations it assumes, hidden on GitHub and npm; it is checked with them, so no block goes unchecked.
 */
export function readmeTsBlocks(readme: string): Block[] {
  const lines = readme.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== "```ts") continue;
    const end = lines.indexOf("```", i + 1);
    if (end < 0) throw new Error(`README.md:${i + 1}: a \`\`\`ts block is never closed`);
    let assumes = "";
    if (lines[i - 1]?.trimEnd().endsWith("-->")) {
      let start = i - 1;
      while (start > 0 && !lines[start]!.includes("<!--")) start--;
      const comment = lines.slice(start, i).join("\n");
      const match = /^<!-- fragment:([\s\S]*)-->$/.exec(comment.trim());
      if (match === null)
        throw new Error(`README.md:${start + 1}: the comment above a ts block is not <!-- fragment: … -->`);
      assumes = match[1]!.trim();
    }
    blocks.push({ line: i + 2, code: lines.slice(i + 1, end).join("\n"), assumes });
    i = end;
  }
  return blocks;
}

describe("README types", () => {
  it("type-checks every ts block under strict, as a user's project compiles it", () => {
    const blocks = readmeTsBlocks(readFileSync(join(root, "README.md"), "utf8"));
    expect(blocks.length).toBeGreaterThan(10);
    // The package's own compiler options: strict, noUncheckedIndexedAccess, NodeNext, and "paths"
    // mapping langgraph-replan to src, as the examples' imports resolve in this checkout.
    const config = ts.getParsedCommandLineOfConfigFile(
      join(root, "tsconfig.json"),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (d) => {
          throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
        },
      },
    );
    if (config === undefined) throw new Error("tsconfig.json did not parse");
    const options: ts.CompilerOptions = { ...config.options, strict: true, noEmit: true };
    // One file per block, each a module of its own (`export {}` keeps their names apart), beside the
    // tests so that "paths" and node_modules resolve; the declarations a fragment assumes come first,
    // on one line, so a diagnostic's line in the file maps back to the README.
    const dir = join(root, "test", ".readme-types");
    const files = new Map(
      blocks.map((b) => [
        join(dir, `readme-line-${b.line}.ts`),
        { ...b, text: `${b.assumes.replace(/\n/g, " ")}\n${b.code}\nexport {};\n` },
      ]),
    );
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (name, version, onError, create) => {
      const file = files.get(resolve(name));
      return file ? ts.createSourceFile(name, file.text, version, true) : getSourceFile(name, version, onError, create);
    };
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (name) => files.has(resolve(name)) || fileExists(name);
    const readFile = host.readFile.bind(host);
    host.readFile = (name) => files.get(resolve(name))?.text ?? readFile(name);
    // One program for every block: the library's types are checked once.
    const program = ts.createProgram([...files.keys()], options, host);
    const failures: string[] = [];
    for (const [name, block] of files) {
      const diagnostics = ts.getPreEmitDiagnostics(program, program.getSourceFile(name));
      if (diagnostics.length === 0) continue;
      const lines = diagnostics.map((d) => {
        const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : undefined;
        const where =
          at === undefined || resolve(d.file!.fileName) !== name
            ? (d.file?.fileName ?? "(no file)")
            : at === 0
              ? `README.md:${block.line - 2} (the fragment's declarations)`
              : `README.md:${block.line + at - 1}`;
        return `  ${where}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n    ")}`;
      });
      failures.push(`the block at README.md:${block.line}:\n${lines.join("\n")}`);
    }
    expect(failures.join("\n")).toBe("");
  }, 120_000);
});
