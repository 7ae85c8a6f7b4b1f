/**
 * What the ActionRetrier suite needs from a store, and small helpers to await events
 * instead of sleeping. Each store's *.test.ts supplies a factory; the suite is identical.
 */
import type { Store } from "../../src/index.js";

/** One fresh, isolated store (own file or schema) plus app-table helpers in its SQL. */
export interface RetrierTestStore<Tx> {
  store: Store<Tx>;
  /** Closes the store and deletes what create() made. */
  dispose(): Promise<void>;
  /**
   * Runs `fn` in a transaction on a connection the application owns, then commits (or
   * rolls back). Resolves after the transaction ended and `fn`'s returned value settled.
   */
  inAppTransaction(fn: (tx: Tx) => unknown, rollback: boolean): Promise<void>;
  /** Creates the app table `app_rows (k TEXT PRIMARY KEY)`. */
  createAppTable(): Promise<void>;
  /** Inserts `k` into app_rows with a handler's transaction handle (sync on SQLite, a promise on PostgreSQL). */
  insertAppRow(tx: Tx, k: string): unknown;
  /** Keys in app_rows, sorted. */
  appRows(): Promise<string[]>;
}

/** Makes fresh stores for one database. */
export interface RetrierStoreFactory<Tx> {
  /** Shown in test titles ("sqlite", "postgres"). */
  name: string;
  create(): Promise<RetrierTestStore<Tx>>;
}

export { aborted, CapturingLogger, deferred, nextEvent, T0 } from "../helpers/common.js";

/** The error `call` throws or rejects with (undefined if none): the API may do either. */
export async function errorOf(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (e) {
    return e;
  }
  return undefined;
}
