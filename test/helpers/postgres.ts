/**
 * PostgreSQL test helpers: the test server's URL, throwaway schemas, and app pools whose
 * search_path points at a schema (so app SQL can say `app_rows` unqualified).
 */
import { randomBytes } from "node:crypto";
import { userInfo } from "node:os";
import pg from "pg";

/** The test database: `DATABASE_URL`, or a local server's `test` database. */
export const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://127.0.0.1:5432/test";

// node-postgres takes the default user from $USER, which CI shells may not set; libpq
// (psql) uses the OS account. Do the same here (children inherit it).
if (!process.env.PGUSER && !process.env.USER) process.env.PGUSER = userInfo().username;

/** A fresh random schema name (not created yet). */
export function randomSchema(prefix = "wp_test"): string {
  return `${prefix}_${randomBytes(6).toString("hex")}`;
}

/** A pg.Pool whose connections use `schema` as search_path; idle-connection errors are ignored. */
export function appPool(schema: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max, options: `-c search_path=${schema}` });
  pool.on("error", () => undefined);
  return pool;
}

/** Runs one statement on a short-lived connection. */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Drops a schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/** Terminates every other connection to the test database (fault injection). Returns how many. */
export async function terminateOtherConnections(): Promise<number> {
  const rows = await adminQuery<{ n: number }>(
    "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
  );
  return rows[0]?.n ?? 0;
}
