/**
 * The conformance suite on SQLite: a fresh database file per test; the application's own
 * connection (for { tx } enqueue) is a second better-sqlite3 connection to that file.
 */
import type { Database } from "better-sqlite3";
import { sqliteStore, type SqliteStore } from "../../src/drivers/sqlite/index.js";
import { inSqliteAppTransaction } from "../helpers/sqlite-app.js";
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
  inAppTransaction(h, fn, rollback) {
    return inSqliteAppTransaction((h as SqliteHarnessStore).path, fn, rollback);
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
