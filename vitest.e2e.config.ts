import { defineConfig } from "vitest/config";
import { packageAlias } from "./vitest.config.js";

export default defineConfig({
  resolve: { alias: packageAlias },
  test: {
    include: ["test-e2e/**/*.test.ts"],
    globals: true,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
