// Builds, packs and lints the published package: publint (package.json, exports, files) and
// Are The Types Wrong (type resolution for ESM consumers; the package is ESM-only). Then checks
// that the optional peers stay optional: `langchain` (and deepagents) are reached only from the
// `langgraph-replan/agent` subpath, so the root, `/policy`, `/views`, `/worker` and `/testing` load
// without them.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, posix, resolve } from "node:path";

const run = (cmd, args) => execFileSync(cmd, args, { stdio: "inherit" });
run("npm", ["run", "build"]);
run("npx", ["--no-install", "publint", "--strict"]);
run("npx", ["--no-install", "attw", "--pack", ".", "--profile", "esm-only"]);

// The root keeps what the quickstart and an embedding graph need; views are `langgraph-replan/views`.
const MAX_ROOT_NAMES = 20;
const root = Object.keys(await import(new URL("../dist/index.js", import.meta.url).href));
if (root.length > MAX_ROOT_NAMES) {
  throw new Error(`the root exports ${root.length} runtime names (at most ${MAX_ROOT_NAMES}): ${root.join(", ")}`);
}
const views = Object.keys(await import(new URL("../dist/views/index.js", import.meta.url).href));
for (const name of ["userView", "operatorView", "debugView", "htmlReport", "planMermaid", "planDiff"]) {
  if (!views.includes(name)) throw new Error(`langgraph-replan/views does not export ${name}`);
}
console.log(`root: ${root.length} runtime names; views: ${views.length}`);
// Users' own tests get the scripted chat model; it must load with the required peers alone
// (the loop below keeps langchain, deepagents and the PostgreSQL packages out of its imports).
const testing = await import(new URL("../dist/testing/index.js", import.meta.url).href);
if (typeof testing.ScriptedChatModel !== "function")
  throw new Error("langgraph-replan/testing does not export ScriptedChatModel");
if (root.includes("ScriptedChatModel"))
  throw new Error("the root exports ScriptedChatModel: it belongs to langgraph-replan/testing");
const pkg = JSON.parse(readFileSync("package.json", "utf8"));
const optional = ["langchain", "deepagents"];
// A SQLite user loads the root (requestStop and resumeStopped included) without the PostgreSQL packages.
const postgres = ["pg", "pg-boss", "@langchain/langgraph-checkpoint-postgres"];
// The MCP SDK is an optional peer too: only `langgraph-replan/mcp` (and the CLI's `mcp` command) load it.
const mcp = ["@modelcontextprotocol/sdk"];
for (const [subpath, target] of Object.entries(pkg.exports)) {
  if (typeof target !== "object" || subpath === "./agent") continue;
  const seen = new Set();
  const queue = [resolve(target.import)];
  while (queue.length > 0) {
    const file = queue.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    for (const [, spec] of readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)) {
      if (spec.startsWith(".")) queue.push(join(dirname(file), spec));
      else if (optional.some((name) => spec === name || spec.startsWith(`${name}/`)))
        throw new Error(`${subpath} reaches ${spec} through ${file}: only langgraph-replan/agent may import it`);
      else if (subpath !== "./mcp" && mcp.some((name) => spec === name || spec.startsWith(`${name}/`)))
        throw new Error(`${subpath} reaches ${spec} through ${file}: only langgraph-replan/mcp may import it`);
      else if (subpath !== "./worker" && postgres.some((name) => spec === name || spec.startsWith(`${name}/`)))
        throw new Error(`${subpath} reaches ${spec} through ${file}: only langgraph-replan/worker may import it`);
    }
  }
}
for (const subpath of ["./agent", "./testing", "./mcp"])
  if (!existsSync(pkg.exports[subpath].import))
    throw new Error(`langgraph-replan${subpath.slice(1)} is missing from dist`);
console.log(
  "optional peers: langchain and deepagents are reached only from langgraph-replan/agent, " +
    "the PostgreSQL packages only from langgraph-replan/worker, the MCP SDK only from langgraph-replan/mcp",
);

// The README npm shows is the packed one: every relative link in it must open a file of the tarball
// (links to the sources, tests and examples are absolute, to the repository), and every docs/ file it
// names must ship (`docs/decisions/0011` names the record 0011-….md).
const packDir = mkdtempSync(join(tmpdir(), "langgraph-replan-pack-"));
try {
  const [{ filename }] = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--pack-destination", packDir], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  const tarball = join(packDir, filename);
  const packed = new Set(
    execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" })
      .split("\n")
      .filter((name) => name.startsWith("package/"))
      .map((name) => name.slice("package/".length)),
  );
  const readme = execFileSync("tar", ["-xzOf", tarball, "package/README.md"], { encoding: "utf8" });
  const broken = readmeLinkProblems(readme, packed);
  if (broken.length > 0)
    throw new Error(`the packed README links ${broken.length} file(s) the tarball lacks:\n  ${broken.join("\n  ")}`);
  console.log(`README: every relative link and docs/ path resolves in the tarball (${packed.size} files)`);
} finally {
  rmSync(packDir, { recursive: true, force: true });
}

/** The README's relative links and docs/ paths that name no file of `packed`, each with its line. */
function readmeLinkProblems(readme, packed) {
  const problems = [];
  let fenced = false;
  readme.split("\n").forEach((raw, index) => {
    if (/^\s*(```|~~~)/.test(raw)) fenced = !fenced;
    if (fenced) return;
    const line = raw.replace(/<!--.*?-->/g, "");
    // Code spans are not links (`tools[0](args)`), though a link's text may be one.
    const prose = line.replace(/`[^`]*`/g, "code");
    const at = `README.md:${index + 1}`;
    // [text](target "title"), ![alt](target), [label]: target, href="target", src="target"
    const targets = [
      ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]),
      ...[...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g)].map((m) => m[1]),
      ...[...prose.matchAll(/\b(?:href|src)\s*=\s*"([^"]+)"/g)].map((m) => m[1]),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#") || target.startsWith("//")) continue;
      let path;
      try {
        path = posix.normalize(decodeURIComponent(target.split(/[?#]/)[0]));
      } catch {
        problems.push(`${at}: ${target} (not a readable path)`);
        continue;
      }
      if (path.startsWith("../") || path.startsWith("/")) problems.push(`${at}: ${target} (outside the package)`);
      else if (!packed.has(path) && ![...packed].some((file) => file.startsWith(`${path.replace(/\/$/, "")}/`)))
        problems.push(`${at}: ${target}`);
    }
    // Plain-text paths under docs/ outside links are read as references too: they must ship.
    for (const [, path] of line.replace(/\[[^\]]*\]\([^)]*\)/g, "").matchAll(/(?<![\w/.-])(docs\/[\w./-]*\w)/g))
      if (!packed.has(path) && ![...packed].some((file) => file.startsWith(`${path}-`) || file.startsWith(`${path}/`)))
        problems.push(`${at}: ${path} (named in the text)`);
  });
  return problems;
}
