// Builds, packs and lints the published package: publint (package.json, exports, files) and
// Are The Types Wrong (type resolution for ESM consumers; the package is ESM-only).
import { execFileSync } from "node:child_process";

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
