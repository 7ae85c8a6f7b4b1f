/**
 * The ActionRetrier suite on PostgreSQL: a fresh random schema per test, dropped after it.
 * The application's connections (for { tx } and the app table) come from a pg.Pool whose
 * search_path is that schema; the store is given the same pool.
 * Server: DATABASE_URL, or postgres://127.0.0.1:5432/test.
 */
import { randomBytes } from "node:crypto";
import { userInfo } from "node:os";
import pg, { type PoolClient } from "pg";

import { postgresStore } from "../../src/drivers/postgres/index.js";
import { useSharedServer } from "../postgres/helpers.js";
import type { RetrierStoreFactory } from "./helpers.js";
import { defineActionRetrierSuite } from "./suite.js";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://127.0.0.1:5432/test";
// node-postgres takes its default user from $USER, which some shells do not set.
if (!process.env.PGUSER && !process.env.USER) process.env.PGUSER = userInfo().username;

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  client.on("error", () => undefined);
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

// The chaos test restarts the server under an exclusive lock; hold it shared meanwhile.
useSharedServer();

const factory: RetrierStoreFactory<PoolClient> = {
  name: "postgres",
  async create() {
    const schema = `wp_retrier_${randomBytes(6).toString("hex")}`;
    const app = new pg.Pool({ connectionString: DATABASE_URL, max: 10, options: `-c search_path=${schema}` });
    app.on("error", () => undefined);
    const store = postgresStore({ pool: app, schema });
    await store.migrate();
    return {
      store,
      async dispose() {
        await store.close();
        await dropSchema(schema);
        await app.end();
      },
      async inAppTransaction(fn, rollback) {
        const client = await app.connect();
        try {
          await client.query("BEGIN");
          try {
            await fn(client);
          } catch (e) {
            await client.query("ROLLBACK");
            throw e;
          }
          await client.query(rollback ? "ROLLBACK" : "COMMIT");
        } finally {
          client.release();
        }
      },
      async createAppTable() {
        await app.query("CREATE TABLE app_rows (k TEXT PRIMARY KEY)");
      },
      insertAppRow(tx, k) {
        return tx.query("INSERT INTO app_rows (k) VALUES ($1)", [k]);
      },
      async appRows() {
        return (await app.query<{ k: string }>("SELECT k FROM app_rows ORDER BY k")).rows.map((r) => r.k);
      },
    };
  },
};

defineActionRetrierSuite(factory);
