/**
 * The ActionRetrier suite on SQLite: a fresh database file per test; the application's
 * own connection (for { tx }) is a second better-sqlite3 connection to that file.
 */
import type { Database } from "better-sqlite3";
import { sqliteStore } from "../../src/drivers/sqlite/index.js";
import { inSqliteAppTransaction } from "../helpers/sqlite-app.js";
import { tempDbPath } from "../helpers/tmp.js";
import type { RetrierStoreFactory } from "./helpers.js";
import { defineActionRetrierSuite } from "./suite.js";

const factory: RetrierStoreFactory<Database> = {
  name: "sqlite",
  async create() {
    const tmp = tempDbPath("workpool-retrier-");
    const store = sqliteStore({ filename: tmp.path });
    return {
      store,
      async dispose() {
        await store.close();
        tmp.remove();
      },
      inAppTransaction(fn, rollback) {
        return inSqliteAppTransaction(tmp.path, fn, rollback);
      },
      async createAppTable() {
        store.db.exec("CREATE TABLE app_rows (k TEXT PRIMARY KEY)");
      },
      insertAppRow(tx, k) {
        tx.prepare("INSERT INTO app_rows (k) VALUES (?)").run(k);
      },
      async appRows() {
        return (store.db.prepare("SELECT k FROM app_rows ORDER BY k").all() as { k: string }[]).map((r) => r.k);
      },
    };
  },
};

defineActionRetrierSuite(factory);
