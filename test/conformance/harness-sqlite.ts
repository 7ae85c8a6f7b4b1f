/**
 * The SQLite harness of the shared suites (conformance, driver contract): a fresh
 * database file per test; the application's own
 * connection (for { tx } enqueue) is a second better-sqlite3 connection to that file.
 */
import BetterSqlite3, { type Database } from "better-sqlite3";
import { sqliteStore, type SqliteStore } from "../../src/drivers/sqlite/index.js";
import { openTestStore, tempDbPath, type SqliteTestStore } from "../helpers/stores.js";
import type { HarnessStore, StoreHarness } from "./harness.js";

interface SqliteHarnessStore extends HarnessStore<Database> {
  store: SqliteStore;
  path: string;
  t: SqliteTestStore;
}

/** The harness of this store for the shared suites. */
export const sqliteHarness: StoreHarness<Database> = {
  name: "sqlite",
  async create() {
    const t = await openTestStore("sqlite");
    const h: SqliteHarnessStore = { store: t.store, path: t.path, t, dispose: () => t.cleanup() };
    return h;
  },
  inAppTransaction(h, fn, rollback) {
    return (h as SqliteHarnessStore).t.inAppTransaction(fn, rollback);
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
  async countWorkRows(h) {
    return ((h.store as SqliteStore).db.prepare("SELECT count(*) AS n FROM workpool_work").get() as { n: number }).n;
  },
  async createStoreWith(h, extra, inherit = false) {
    const base = { filename: (h as SqliteHarnessStore).path };
    const options = inherit ? Object.assign(Object.create(extra) as object, base) : { ...base, ...extra };
    const store = sqliteStore(options as Parameters<typeof sqliteStore>[0]);
    await store.close();
  },
  async secondStore(h) {
    return sqliteStore({ filename: (h as SqliteHarnessStore).path });
  },
  async wrongTxValues(h) {
    const path = (h as SqliteHarnessStore).path;
    const other = tempDbPath();
    const otherDb = new BetterSqlite3(other.path);
    otherDb.exec("BEGIN");
    const memory = new BetterSqlite3(":memory:");
    memory.exec("BEGIN");
    const idle = new BetterSqlite3(path);
    const closed = new BetterSqlite3(path);
    closed.close();
    const done = async (): Promise<void> => undefined;
    return [
      { label: "a plain object", tx: {}, done },
      { label: "a string", tx: "tx", done },
      { label: "an object with only a prepare method", tx: { prepare: () => undefined }, done },
      { label: "a connection with no open transaction", tx: idle, done: async () => void idle.close() },
      { label: "a closed connection", tx: closed, done },
      {
        label: "a connection to another file",
        tx: otherDb,
        done: async () => {
          otherDb.close();
          other.remove();
        },
      },
      { label: "an in-memory database", tx: memory, done: async () => void memory.close() },
    ];
  },
  openAnotherStore(h) {
    return sqliteStore({ filename: (h as SqliteHarnessStore).path });
  },
  query(h, sql) {
    return (h as SqliteHarnessStore).t.query(sql);
  },
  connections: 1,
  keyEventsTableSql:
    "CREATE TABLE key_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, kind TEXT NOT NULL, pid INTEGER NOT NULL)",
  childArgs(h) {
    return (h as SqliteHarnessStore).t.childArgs;
  },
};
