/**
 * The PostgreSQL harness of the shared suites (conformance, driver contract): a fresh
 * schema per test (openTestStore). The application's connections (for { tx } enqueue
 * and the app table) come from a pg.Pool whose search_path is that schema; the store is
 * given the same pool ({ pool } mode).
 */
import pg, { type PoolClient } from "pg";

import { postgresStore, type PostgresStore } from "../../src/drivers/postgres/index.js";
import { DATABASE_URL, urlWithDatabase } from "../postgres/helpers.js";
import { openTestStore, type PostgresTestStore } from "../helpers/stores.js";
import type { HarnessStore, StoreHarness } from "./harness.js";

interface PgHarnessStore extends HarnessStore<PoolClient> {
  store: PostgresStore;
  app: pg.Pool;
  schema: string;
  t: PostgresTestStore;
}

/** The harness of this store for the shared suites. */
export const postgresHarness: StoreHarness<PoolClient> = {
  name: "postgres",
  async create() {
    const t = await openTestStore("postgres");
    const h: PgHarnessStore = { store: t.store, app: t.app, schema: t.schema, t, dispose: () => t.cleanup() };
    return h;
  },
  inAppTransaction(h, fn, rollback) {
    return (h as PgHarnessStore).t.inAppTransaction(fn, rollback);
  },
  async createAppTable(h) {
    await (h as PgHarnessStore).app.query("CREATE TABLE app_rows (k TEXT PRIMARY KEY)");
  },
  insertAppRow(tx, k) {
    // Handlers in the suite may not await this; the client runs its queries in order, so
    // the insert still lands before the savepoint is released and the transaction commits.
    const p = tx.query("INSERT INTO app_rows (k) VALUES ($1)", [k]);
    p.catch(() => undefined);
    return p;
  },
  async countAppRows(h) {
    const { rows } = await (h as PgHarnessStore).app.query<{ n: number }>("SELECT count(*)::int AS n FROM app_rows");
    return rows[0]!.n;
  },
  async countWorkRows(h) {
    const { rows } = await (h as PgHarnessStore).app.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${(h as PgHarnessStore).schema}".work`,
    );
    return rows[0]!.n;
  },
  async createStoreWith(h, extra, inherit = false) {
    const base = { connectionString: DATABASE_URL, schema: (h as PgHarnessStore).schema };
    const options = inherit ? Object.assign(Object.create(extra) as object, base) : { ...base, ...extra };
    const store = postgresStore(options as Parameters<typeof postgresStore>[0]);
    await store.close();
  },
  async secondStore(h) {
    return postgresStore({ connectionString: DATABASE_URL, schema: (h as PgHarnessStore).schema });
  },
  async wrongTxValues(h) {
    const { app } = h as PgHarnessStore;
    const idle = await app.connect();
    const failed = await app.connect();
    await failed.query("BEGIN");
    await failed.query("SELECT 1/0").catch(() => undefined);
    const otherDb = new pg.Client({ connectionString: urlWithDatabase("postgres") });
    await otherDb.connect();
    await otherDb.query("BEGIN");
    const done = async (): Promise<void> => undefined;
    return [
      { label: "a plain object", tx: {}, done },
      { label: "a string", tx: "tx", done },
      { label: "an object with a query method that answers nothing", tx: { query: async () => ({}) }, done },
      { label: "a pg.Pool", tx: app, done },
      { label: "a client with no open transaction", tx: idle, done: async () => idle.release() },
      {
        label: "a client in a failed transaction",
        tx: failed,
        done: async () => {
          await failed.query("ROLLBACK");
          failed.release();
        },
      },
      {
        label: "a client of another database",
        tx: otherDb,
        done: async () => {
          await otherDb.query("ROLLBACK");
          await otherDb.end();
        },
      },
    ];
  },
  openAnotherStore(h) {
    return postgresStore({ connectionString: DATABASE_URL, schema: (h as PgHarnessStore).schema });
  },
  query(h, sql) {
    return (h as PgHarnessStore).t.query(sql);
  },
  // appPool's default size.
  connections: 10,
  keyEventsTableSql: "CREATE TABLE key_events (seq BIGSERIAL PRIMARY KEY, key TEXT NOT NULL, kind TEXT NOT NULL, pid INTEGER NOT NULL)",
  childArgs(h) {
    return (h as PgHarnessStore).t.childArgs;
  },
};
