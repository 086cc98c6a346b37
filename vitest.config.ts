import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Checks every decision a test makes against its rule in the table (src/policy/rules.ts).
    setupFiles: ["test/setup/decision-corpus.ts"],
    globals: true,
    testTimeout: 30_000,
  },
});
