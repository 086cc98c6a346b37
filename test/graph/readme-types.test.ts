import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { allTsBlocks, docFiles, root } from "../docs-markdown.js";

/** The package's own compiler options, strict: as a user's project compiles the examples. */
function compilerOptions(): ts.CompilerOptions {
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
  return { ...config.options, strict: true, noEmit: true };
}

describe("README and guides types", () => {
  it("type-checks every ts block of README.md and docs/guides under strict, as a user's project compiles it", () => {
    const blocks = allTsBlocks();
    // Every guide has an example, and the reader finds it: a block it missed would go unchecked.
    expect(new Set(blocks.map((b) => b.file)).size).toBe(docFiles().length);
    expect(blocks.length).toBeGreaterThan(20);
    const options = compilerOptions();
    // One file per block, each a module of its own (`export {}` keeps their names apart), beside the
    // tests so that "paths" and node_modules resolve; the declarations a fragment assumes come first,
    // on one line, so a diagnostic's line in the file maps back to the document.
    const dir = join(root, "test", ".readme-types");
    const files = new Map(
      blocks.map((b) => [
        join(dir, `${b.file.replace(/[/.]/g, "-")}-line-${b.line}.ts`),
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
              ? `${block.file}:${block.line - 2} (the fragment's declarations)`
              : `${block.file}:${block.line + at - 1}`;
        return `  ${where}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n    ")}`;
      });
      failures.push(`the block at ${block.file}:${block.line}:\n${lines.join("\n")}`);
    }
    expect(failures.join("\n")).toBe("");
  }, 180_000);
});
