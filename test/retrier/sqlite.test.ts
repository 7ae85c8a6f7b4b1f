/**
 * The ActionRetrier suite on SQLite: a fresh database file per test; the application's
 * own connection (for { tx }) is a second better-sqlite3 connection to that file.
 */
import BetterSqlite3, { type Database } from "better-sqlite3";
import { sqliteStore } from "../../src/drivers/sqlite/index.js";
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
      async inAppTransaction(fn, rollback) {
        const app = new BetterSqlite3(tmp.path);
        app.pragma("busy_timeout = 5000");
        try {
          let returned: unknown;
          const run = app.transaction(() => {
            // A { tx } run writes synchronously on SQLite; its promise settles after the commit.
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
