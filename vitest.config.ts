import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Store tests share one PostgreSQL server; files run one at a time per store schema.
    fileParallelism: true,
  },
});
