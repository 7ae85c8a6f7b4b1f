/**
 * Where the tests find PostgreSQL, and whether this run uses it at all. Plain values, no
 * vitest hooks: the global set-up imports this too.
 */
import { userInfo } from "node:os";

/** The test database: `DATABASE_URL`, or a local server's `test` database. */
export const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://127.0.0.1:5432/test";

/**
 * Set (to "1") by `vitest run --mode sqlite` (`npm run test:sqlite`): the run leaves out the
 * tests that need PostgreSQL, for a machine without a server. See vitest.config.ts.
 */
export const SKIP_POSTGRES = process.env.WORKPOOL_TEST_SKIP_POSTGRES === "1";

// node-postgres takes the default user from $USER, which CI shells may not set; libpq
// (psql) uses the OS account. Do the same here (children inherit it).
if (!process.env.PGUSER && !process.env.USER) process.env.PGUSER = userInfo().username;
