/**
 * What the conformance suite needs from each store: a fresh, isolated store per test and
 * a few app-table helpers written in that store's SQL. Each driver's *.test.ts supplies one.
 */
import type { Store } from "../../src/index.js";

/** A fresh store plus how to dispose of it. */
export interface HarnessStore<Tx> {
  store: Store<Tx>;
  /** Stops using and deletes what create() made. */
  dispose(): Promise<void>;
}

/** Per-driver hooks for the shared suite. */
export interface StoreHarness<Tx> {
  /** Name shown in test titles ("sqlite", "postgres"). */
  name: string;
  /** A new, empty store (own file or schema) for one test. */
  create(): Promise<HarnessStore<Tx>>;
  /**
   * Runs `fn` in a transaction on a connection the application owns (not the store's),
   * then commits, or rolls back if `rollback` is set. For SQLite, `fn` runs synchronously
   * inside db.transaction(); for PostgreSQL inside BEGIN on a pg client. Resolves after
   * the transaction ended and the value `fn` returned (often a promise) has settled.
   */
  inAppTransaction(h: HarnessStore<Tx>, fn: (tx: Tx) => unknown, rollback: boolean): Promise<void>;
  /** Creates the app table `app_rows (k TEXT PRIMARY KEY)` (with the store's own connection). */
  createAppTable(h: HarnessStore<Tx>): Promise<void>;
  /** Inserts `k` into app_rows using the transaction handle given to a handler. */
  insertAppRow(tx: Tx, k: string): unknown;
  /** Number of rows in app_rows. */
  countAppRows(h: HarnessStore<Tx>): Promise<number>;
  /** Number of rows in the store's work table (every state), read with plain SQL. */
  countWorkRows(h: HarnessStore<Tx>): Promise<number>;
  /**
   * Calls this store's factory (sqliteStore, postgresStore) with its usual options plus
   * `extra` (or, with `inherit`, with `extra` as the options object's prototype); closes
   * what it made.
   */
  createStoreWith(h: HarnessStore<Tx>, extra: Record<string, unknown>, inherit?: boolean): Promise<void>;
  /** Another store on the same database (file or schema), as another process would open it; the caller closes it. */
  secondStore(h: HarnessStore<Tx>): Promise<Store<Tx>>;
  /**
   * Values given as an enqueue's `tx` that this store must refuse: not a connection, a
   * connection with no open transaction, a connection to another database, and the
   * like. Each is ready to use; `done` releases what it holds.
   */
  wrongTxValues(h: HarnessStore<Tx>): Promise<{ label: string; tx: unknown; done(): Promise<void> }[]>;
  /**
   * Another store on the same database with its own connection(s), as a second process
   * would open it; the caller closes it.
   */
  openAnotherStore(h: HarnessStore<Tx>): Store<Tx>;
  /** How many transactions the store can hold open at once (its connections): SQLite 1. */
  readonly connections: number;
  /** Runs one SQL statement with the application's connection and returns its rows. */
  query(h: HarnessStore<Tx>, sql: string): Promise<Record<string, unknown>[]>;
  /** SQL for an app table `key_events (seq, key, kind, pid)` whose seq orders the inserts (see keys-child.mjs). */
  readonly keyEventsTableSql: string;
  /** The arguments test/fixtures/keys-child.mjs needs to open this store in another process. */
  childArgs(h: HarnessStore<Tx>): string[];
}
