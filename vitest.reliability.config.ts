import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test-reliability/**/*.test.ts"],
    globals: true,
    testTimeout: 900_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});
