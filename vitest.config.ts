import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The examples import this package by name, as a user's project does; here the name means the
// source (tsconfig.json "paths" does the same for tsc and tsx).
export const packageAlias = [
  { find: /^langgraph-replan$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) },
  // The createAgent middleware's subpath is `./agent`; its source lives in src/middleware/.
  {
    find: /^langgraph-replan\/agent$/,
    replacement: fileURLToPath(new URL("./src/middleware/index.ts", import.meta.url)),
  },
  { find: /^langgraph-replan\/(.+)$/, replacement: fileURLToPath(new URL("./src/$1/index.ts", import.meta.url)) },
];

export default defineConfig({
  resolve: { alias: packageAlias },
  test: {
    include: ["test/**/*.test.ts"],
    // Checks every decision a test makes against its rule in the table (src/policy/ladder/rules.ts).
    setupFiles: ["test/setup/decision-corpus.ts"],
    globals: true,
    testTimeout: 30_000,
  },
});
