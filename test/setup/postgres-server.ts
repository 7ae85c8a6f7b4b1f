/**
 * Vitest global set-up: before any test file runs, checks once that the PostgreSQL server
 * and its `test` database answer, and stops the run at once with what to do if not
 * (rather than letting each PostgreSQL test file wait out its hooks). Not used by
 * `vitest run --mode sqlite` (`npm run test:sqlite`), which leaves PostgreSQL out.
 */
import pg from "pg";
import { DATABASE_URL } from "../helpers/postgres-env.js";

const CONNECT_TIMEOUT_MS = 5000;

/** Connects to the test database once; throws an error that says how to fix the set-up. */
export default async function checkPostgres(): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (e) {
    // Without the cause: its stack would bury the message under driver frames.
    throw new Error(explain(e));
  } finally {
    await client.end().catch(() => undefined);
  }
}

function explain(e: unknown): string {
  const url = new URL(DATABASE_URL);
  const where = `${url.hostname}:${url.port || "5432"}`;
  const database = decodeURIComponent(url.pathname.slice(1));
  const { code, message } = e as { code?: string; message?: string };
  const problem =
    code === "3D000"
      ? `the PostgreSQL server at ${where} has no database "${database}": create it with \`createdb ${database}\` (or \`psql -c 'CREATE DATABASE ${database}'\`)`
      : code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EHOSTUNREACH" || /timeout/i.test(message ?? "")
        ? `no PostgreSQL server answers at ${where} (${message ?? code}): start one (trust or password auth) with a database "${database}"`
        : `could not use the PostgreSQL database ${DATABASE_URL} (${message ?? String(e)})`;
  return (
    `The tests need PostgreSQL, and ${problem}. ` +
    "Set DATABASE_URL to use another server or database. " +
    "To run only the SQLite tests on a machine without PostgreSQL: npm run test:sqlite (or npx vitest run --mode sqlite)."
  );
}
