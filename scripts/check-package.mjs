// Builds, packs and lints the published package: publint (package.json, exports, files) and
// Are The Types Wrong (type resolution for ESM consumers; the package is ESM-only).
import { execFileSync } from "node:child_process";

const run = (cmd, args) => execFileSync(cmd, args, { stdio: "inherit" });
run("npm", ["run", "build"]);
run("npx", ["--no-install", "publint", "--strict"]);
run("npx", ["--no-install", "attw", "--pack", ".", "--profile", "esm-only"]);
