/**
 * The ActionRetrier suite on SQLite: a fresh database file per test; the application's
 * own connection (for { tx }) is a second better-sqlite3 connection to that file.
 */
import type { Database } from "better-sqlite3";
import { openTestStore } from "../helpers/stores.js";
import type { RetrierStoreFactory } from "./helpers.js";
import { defineActionRetrierSuite } from "./suite.js";

const factory: RetrierStoreFactory<Database> = {
  name: "sqlite",
  async create() {
    const t = await openTestStore("sqlite", { prefix: "workpool-retrier-" });
    return {
      store: t.store,
      dispose: () => t.cleanup(),
      inAppTransaction: (fn, rollback) => t.inAppTransaction(fn, rollback),
      createAppTable: () => t.exec("CREATE TABLE app_rows (k TEXT PRIMARY KEY)"),
      insertAppRow(tx, k) {
        tx.prepare("INSERT INTO app_rows (k) VALUES (?)").run(k);
      },
      async appRows() {
        return (await t.query<{ k: string }>("SELECT k FROM app_rows ORDER BY k")).map((r) => r.k);
      },
    };
  },
};

defineActionRetrierSuite(factory);
