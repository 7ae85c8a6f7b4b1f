/**
 * PostgreSQL test helpers: the test server's URL, throwaway schemas, and app pools whose
 * search_path points at a schema (so app SQL can say `app_rows` unqualified).
 */
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { DATABASE_URL, SKIP_POSTGRES } from "../helpers/postgres-env.js";

export { DATABASE_URL, SKIP_POSTGRES };

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

/** The test server's URL with another database (e.g. "postgres"). */
export function urlWithDatabase(database: string): string {
  const url = new URL(DATABASE_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The test server's URL, logging in as `user` (a role a test created). */
export function urlWithUser(user: string): string {
  const url = new URL(DATABASE_URL);
  url.username = user;
  return url.toString();
}

/** A connection URL whose sessions carry `applicationName`, so a test can find and kill exactly them. */
export function urlWithApplicationName(applicationName: string): string {
  const url = new URL(DATABASE_URL);
  url.searchParams.set("application_name", applicationName);
  return url.toString();
}

/**
 * Fault injection: terminates every session of the test database named `applicationName`
 * (pg_terminate_backend, as a server restart or a network cut would), and returns how
 * many once those sessions have ended. pg_terminate_backend only signals a session: its
 * goodbye to the client (a FATAL error, then the socket closing) may come a moment after
 * the call returns, so a test that went on at once could race it.
 */
export async function terminateConnections(applicationName: string): Promise<number> {
  // In the select list, so only the sessions the WHERE clause picked are terminated.
  const rows = await adminQuery<{ pid: number; terminated: boolean }>(
    `SELECT pid, pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = $1`,
    [applicationName],
  );
  const pids = rows.filter((r) => r.terminated).map((r) => r.pid);
  await until(
    async () =>
      (await adminQuery<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1)", [pids]))[0]!.n === 0,
    "the terminated sessions to end",
  );
  return pids.length;
}

/** Resolves once `condition()` is true, checking every few ms (for state, never for timing). */
export async function until(condition: () => boolean | Promise<boolean>, what: string, limitMs = 30_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Advisory lock key that serializes "restarts the server" tests against all other PostgreSQL tests. */
const SERVER_LOCK_KEY = 0x77706f6f6c; // "wpool"

async function lockClient(sql: string): Promise<pg.Client> {
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: DATABASE_URL, application_name: "workpool-test-lock" });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.query(sql, [SERVER_LOCK_KEY]);
      return client;
    } catch (e) {
      await client.end().catch(() => undefined);
      // The server may be restarting (another test file's chaos test): try again.
      if (attempt >= 120) throw e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/**
 * Held by every PostgreSQL test file while it runs (shared), so a test that restarts
 * the server can wait until no other file uses it. Returns the release function.
 */
export async function holdServerShared(): Promise<() => Promise<void>> {
  const client = await lockClient("SELECT pg_advisory_lock_shared($1)");
  return () => client.end().catch(() => undefined);
}

/**
 * Holds the server shared for the whole test file or suite (see {@link holdServerShared}).
 * Every PostgreSQL test calls it, so in a run without PostgreSQL (`--mode sqlite`) it
 * skips each test of its file or suite instead.
 */
export function useSharedServer(): void {
  if (SKIP_POSTGRES) {
    beforeEach((ctx) => ctx.skip("this run leaves out PostgreSQL (--mode sqlite)"));
    return;
  }
  holdServerWhenUsed();
}

/**
 * Holds the server shared for the whole file when this run uses PostgreSQL, without
 * skipping anything when it does not: for files that run some tests on each store.
 */
export function holdServerWhenUsed(): void {
  if (SKIP_POSTGRES) return;
  let release: (() => Promise<void>) | null = null;
  beforeAll(async () => {
    release = await holdServerShared();
  });
  afterAll(async () => {
    await release?.();
  });
}

/** A list of clean-up functions run (last first) after each test of the file. */
export function useCleanups(): (() => Promise<void>)[] {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return cleanups;
}

/**
 * Waits until no other test file holds the server (see {@link holdServerShared}) and
 * holds it exclusively. A server restart releases it (the session ends); call the
 * returned function to release it otherwise.
 */
export async function holdServerExclusive(): Promise<() => Promise<void>> {
  const client = await lockClient("SELECT pg_advisory_lock($1)");
  return () => client.end().catch(() => undefined);
}
