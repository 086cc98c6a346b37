import { defineConfig } from "vitest/config";
import { packageAlias } from "./vitest.config.js";

export default defineConfig({
  resolve: { alias: packageAlias },
  test: {
    include: ["test-reliability/**/*.test.ts"],
    globals: true,
    testTimeout: 900_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});
