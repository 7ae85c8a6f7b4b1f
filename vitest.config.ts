import { configDefaults, defineConfig } from "vitest/config";

/**
 * Test files that need a PostgreSQL server and nothing else. `vitest run --mode sqlite`
 * (`npm run test:sqlite`) leaves them out; files that test both stores skip their
 * PostgreSQL tests themselves (every one calls `useSharedServer()`, see
 * test/postgres/helpers.ts).
 */
const POSTGRES_ONLY = ["test/postgres/**", "test/**/postgres.test.ts", "test/sim/sim-postgres.test.ts", "test/integrations/prisma.test.ts"];

export default defineConfig(({ mode }) => {
  const sqliteOnly = mode === "sqlite";
  return {
    test: {
      include: ["test/**/*.test.ts"],
      exclude: sqliteOnly ? [...configDefaults.exclude, ...POSTGRES_ONLY] : configDefaults.exclude,
      // Fails the run at once, with what to do, when the PostgreSQL test database does not answer.
      globalSetup: sqliteOnly ? [] : ["test/setup/postgres-server.ts"],
      env: sqliteOnly ? { WORKPOOL_TEST_SKIP_POSTGRES: "1" } : {},
      testTimeout: 60_000,
      hookTimeout: 60_000,
      // Store tests share one PostgreSQL server; files run one at a time per store schema.
      fileParallelism: true,
    },
  };
});
