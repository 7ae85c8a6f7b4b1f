/**
 * The ActionRetrier suite on PostgreSQL: a fresh random schema per test, dropped after it.
 * The application's connections (for { tx } and the app table) come from a pg.Pool whose
 * search_path is that schema; the store is given the same pool.
 */
import type { PoolClient } from "pg";
import { useSharedServer } from "../postgres/helpers.js";
import { openTestStore } from "../helpers/stores.js";
import type { RetrierStoreFactory } from "./helpers.js";
import { defineActionRetrierSuite } from "./suite.js";

// The chaos test restarts the server under an exclusive lock; hold it shared meanwhile.
useSharedServer();

const factory: RetrierStoreFactory<PoolClient> = {
  name: "postgres",
  async create() {
    const t = await openTestStore("postgres", { prefix: "wp_retrier" });
    return {
      store: t.store,
      dispose: () => t.cleanup(),
      inAppTransaction: (fn, rollback) => t.inAppTransaction(fn, rollback),
      createAppTable: () => t.exec("CREATE TABLE app_rows (k TEXT PRIMARY KEY)"),
      insertAppRow(tx, k) {
        return tx.query("INSERT INTO app_rows (k) VALUES ($1)", [k]);
      },
      async appRows() {
        return (await t.query<{ k: string }>("SELECT k FROM app_rows ORDER BY k")).map((r) => r.k);
      },
    };
  },
};

defineActionRetrierSuite(factory);
