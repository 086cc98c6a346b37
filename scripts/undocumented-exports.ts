/**
 * Lists every exported name of every subpath of package.json "exports" that has no doc comment, as
 * TypeDoc would publish it: the API reference is generated from these comments, so a name without
 * one would be a blank entry. `npx tsx scripts/undocumented-exports.ts` prints them, one a line.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";

const root = resolve(import.meta.dirname, "..");

/** The source entry point of each subpath: `./dist/x/index.js` is built from `src/x/index.ts`. */
export function entryPoints(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    exports: Record<string, string | { import: string }>;
  };
  const entries = new Map<string, string>();
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target !== "object") continue;
    const source = target.import.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts");
    entries.set(`langgraph-replan${subpath.slice(1)}`, join(root, source));
  }
  return entries;
}

/** Whether a declaration carries a `/** … *\/` comment with some text or tags. */
function hasDocComment(declaration: ts.Declaration): boolean {
  // A variable's comment sits on its statement; a name exported from a destructuring has none of its own.
  let node: ts.Node = declaration;
  if (ts.isVariableDeclaration(node)) node = node.parent.parent;
  const docs = ts.getJSDocCommentsAndTags(node);
  return docs.some((doc) => (ts.isJSDoc(doc) ? Boolean(doc.comment) || (doc.tags?.length ?? 0) > 0 : true));
}

/** `subpath › name` for every exported name without a doc comment, and how many names each subpath exports. */
export function undocumentedExports(): { missing: string[]; counts: Map<string, number> } {
  const entries = entryPoints();
  const program = ts.createProgram([...entries.values()], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const missing: string[] = [];
  const counts = new Map<string, number>();
  for (const [subpath, file] of entries) {
    const source = program.getSourceFile(file);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (moduleSymbol === undefined) throw new Error(`${subpath}: ${file} did not load`);
    const exported = checker.getExportsOfModule(moduleSymbol);
    counts.set(subpath, exported.length);
    for (const symbol of exported) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const declarations = target.declarations ?? [];
      if (!declarations.some(hasDocComment)) missing.push(`${subpath} › ${symbol.name}`);
    }
  }
  return { missing, counts };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { missing, counts } = undocumentedExports();
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  for (const line of missing) console.log(line);
  console.error(
    `${total - missing.length} of ${total} exported names documented (${[...counts].map(([s, n]) => `${s}: ${n}`).join(", ")})`,
  );
  process.exitCode = missing.length > 0 ? 1 : 0;
}
