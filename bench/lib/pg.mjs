// Small PostgreSQL helpers shared by the PostgreSQL systems and the runner.
import pg from "pg";
import { PG_URL } from "./env.mjs";

/** Runs `fn` with a connected client and always ends it. */
export async function withClient(fn, url = PG_URL) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates the benchmark database if it is missing (connects to `postgres` to do it). */
export async function ensureDatabase() {
  const url = new URL(PG_URL);
  const name = decodeURIComponent(url.pathname.slice(1));
  const admin = new URL(PG_URL);
  admin.pathname = "/postgres";
  await withClient(async (c) => {
    const r = await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!r.rowCount) await c.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  }, admin.toString());
}

/** Drops a schema and everything in it: each PostgreSQL system starts from nothing. */
export async function dropSchema(schema) {
  await withClient((c) => c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
}

/** Polls `sql` (returning one row with column n) every `everyMs` until n is 0. */
export async function waitForZero(client, sql, everyMs = 5, timeoutMs = 120_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await client.query(sql);
    if (Number(r.rows[0].n) === 0) return;
    if (Date.now() > until) throw new Error(`still ${r.rows[0].n} unfinished after ${timeoutMs} ms: ${sql}`);
    await new Promise((res) => setTimeout(res, everyMs));
  }
}
