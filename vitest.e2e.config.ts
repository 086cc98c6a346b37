import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test-e2e/**/*.test.ts"],
    globals: true,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
