/**
 * The test harness itself: a run that needs PostgreSQL stops at once, saying how to fix it,
 * when the test database does not answer; `--mode sqlite` runs without PostgreSQL.
 * Each case runs vitest on one test file in a child process, against a database that
 * does not exist on the test server.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { DATABASE_URL } from "../helpers/postgres-env.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const vitest = fileURLToPath(new URL("../../node_modules/vitest/vitest.mjs", import.meta.url));

/** A URL of the test server whose database does not exist. */
function missingDatabaseUrl(): string {
  const url = new URL(DATABASE_URL);
  url.pathname = "/workpool_no_such_database";
  return url.toString();
}

function runVitest(args: string[]): { status: number | null; output: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: missingDatabaseUrl(), NO_COLOR: "1", FORCE_COLOR: "0" };
  // This run's own mode must not leak into the child's.
  delete env.WORKPOOL_TEST_SKIP_POSTGRES;
  delete env.VITEST;
  delete env.VITEST_MODE;
  delete env.VITEST_POOL_ID;
  delete env.VITEST_WORKER_ID;
  const r = spawnSync(process.execPath, [vitest, "run", ...args], { cwd: root, env, encoding: "utf8" });
  return { status: r.status, output: `${r.stdout}\n${r.stderr}` };
}

test("a run with PostgreSQL tests stops before any test when the test database is missing, and says how to fix it", () => {
  const { status, output } = runVitest(["test/postgres/insert.test.ts"]);
  expect(status).not.toBe(0);
  expect(output).toContain('has no database "workpool_no_such_database": create it with `createdb workpool_no_such_database`');
  expect(output).toContain("npm run test:sqlite");
  expect(output).not.toMatch(/Hook timed out/);
});

test("--mode sqlite leaves PostgreSQL out: PostgreSQL-only files are not run, and the PostgreSQL tests of mixed files are skipped", () => {
  const { status, output } = runVitest([
    "--mode",
    "sqlite",
    "--reporter=json",
    "test/integrations/kysely.test.ts",
    "test/postgres/insert.test.ts",
  ]);
  expect(status, output).toBe(0);
  const report = JSON.parse(output.slice(output.indexOf("{"), output.lastIndexOf("}") + 1)) as {
    testResults: { name: string; assertionResults: { ancestorTitles: string[]; status: string }[] }[];
  };
  expect(report.testResults.map((f) => f.name.slice(root.length))).toEqual(["test/integrations/kysely.test.ts"]);
  const byStore = (title: string) => report.testResults[0]!.assertionResults.filter((a) => a.ancestorTitles[0]!.startsWith(title));
  expect(new Set(byStore("SQLite").map((a) => a.status))).toEqual(new Set(["passed"]));
  expect(byStore("PostgreSQL").length).toBeGreaterThan(0);
  expect(new Set(byStore("PostgreSQL").map((a) => a.status))).toEqual(new Set(["skipped"]));
});
