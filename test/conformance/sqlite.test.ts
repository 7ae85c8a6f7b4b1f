/**
 * The conformance suite on SQLite: a fresh database file per test; the application's own
 * connection (for { tx } enqueue) is a second better-sqlite3 connection to that file.
 */
import BetterSqlite3, { type Database } from "better-sqlite3";
import { sqliteStore, type SqliteStore } from "../../src/drivers/sqlite/index.js";
import { tempDbPath } from "../helpers/tmp.js";
import type { HarnessStore, StoreHarness } from "./harness.js";
import { defineConformanceSuite } from "./suite.js";

interface SqliteHarnessStore extends HarnessStore<Database> {
  store: SqliteStore;
  path: string;
}

const harness: StoreHarness<Database> = {
  name: "sqlite",
  async create() {
    const tmp = tempDbPath();
    const store = sqliteStore({ filename: tmp.path });
    const h: SqliteHarnessStore = {
      store,
      path: tmp.path,
      async dispose() {
        await store.close();
        tmp.remove();
      },
    };
    return h;
  },
  async inAppTransaction(h, fn, rollback) {
    const app = new BetterSqlite3((h as SqliteHarnessStore).path);
    app.pragma("busy_timeout = 5000");
    try {
      let returned: unknown;
      const run = app.transaction(() => {
        // enqueue writes synchronously on SQLite; its promise settles after the commit.
        returned = fn(app);
        if (rollback) throw new Error("rollback");
      });
      try {
        run();
      } catch (e) {
        if (!rollback) throw e;
      }
      await returned;
    } finally {
      app.close();
    }
  },
  async createAppTable(h) {
    (h.store as SqliteStore).db.exec("CREATE TABLE app_rows (k TEXT PRIMARY KEY)");
  },
  insertAppRow(tx, k) {
    tx.prepare("INSERT INTO app_rows (k) VALUES (?)").run(k);
  },
  async countAppRows(h) {
    return ((h.store as SqliteStore).db.prepare("SELECT count(*) AS n FROM app_rows").get() as { n: number }).n;
  },
};

defineConformanceSuite(harness);
