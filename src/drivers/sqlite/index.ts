/**
 * `workpool/sqlite`: the embedded store. One SQLite file, no server; several processes
 * may share the file (WAL mode), and the pool's maxParallelism holds across all of them.
 */
import BetterSqlite3 from "better-sqlite3";
import type { Database } from "better-sqlite3";
import type { Store } from "../../driver/driver.js";
import { InvalidArgumentError } from "../../errors.js";
import { checkInt, checkOptionKeys, describeValue, optionKeys } from "../../checks.js";
import { checkDatabaseOption } from "./connection/connection-checks.js";
import { SqliteDriver } from "./driver.js";
import { migrateSqlite } from "./migrate.js";

/** Options of {@link sqliteStore}: give `filename` or `database`, not both. */
export interface SqliteStoreOptions {
  /** Path of the database file (created if missing). The store opens and closes it. */
  filename?: string;
  /** An open better-sqlite3 connection you own; the store never closes it. */
  database?: Database;
  /**
   * How long a statement waits for another process's write lock before failing, ms
   * (applied to connections the store opens). Default 5000.
   */
  busyTimeoutMs?: number;
  /**
   * `FULL` (default) makes every commit durable against power loss; `NORMAL` is faster
   * and durable against a process crash only. Applied to connections the store opens.
   */
  synchronous?: "FULL" | "NORMAL";
  /** How often workers look for work enqueued by other processes, ms. Default 100. */
  pollIntervalMs?: number;
}

/** The type of an SQLite store: its transaction handle is a better-sqlite3 Database. */
export type SqliteStore = Store<Database> & {
  /** The connection the store uses (also `ctx.tx` in mutation handlers). */
  readonly db: Database;
};

const OPTION_KEYS = optionKeys<SqliteStoreOptions>()({
  filename: true,
  database: true,
  busyTimeoutMs: true,
  synchronous: true,
  pollIntervalMs: true,
});

function positiveInt(field: string, value: unknown, fallback: number, max: number): number {
  return value === undefined ? fallback : checkInt(field, value, 1, max);
}

/**
 * Opens (or wraps) an SQLite database as a workpool store and brings its schema up to
 * date. Tables are named `workpool_*`, so the file can hold the application's tables too.
 */
export function sqliteStore(options: SqliteStoreOptions): SqliteStore {
  if (typeof options !== "object" || options === null) {
    throw new InvalidArgumentError("options", "pass { filename } or { database }");
  }
  checkOptionKeys("options", options, OPTION_KEYS, "sqliteStore()");
  const { filename, database } = options;
  if ((filename === undefined) === (database === undefined)) {
    throw new InvalidArgumentError("filename", "give exactly one of `filename` (a path) or `database` (an open better-sqlite3 connection)");
  }
  if (filename !== undefined && (typeof filename !== "string" || filename.length === 0)) {
    throw new InvalidArgumentError("filename", "must be a non-empty path string");
  }
  const busyTimeoutMs = positiveInt("busyTimeoutMs", options.busyTimeoutMs, 5000, 600_000);
  const pollIntervalMs = positiveInt("pollIntervalMs", options.pollIntervalMs, 100, 600_000);
  const synchronous = options.synchronous ?? "FULL";
  if (synchronous !== "FULL" && synchronous !== "NORMAL") {
    throw new InvalidArgumentError("synchronous", `must be "FULL" or "NORMAL", got ${describeValue(synchronous)}`);
  }
  let db: Database;
  if (filename !== undefined) {
    db = new BetterSqlite3(filename);
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${synchronous}`);
    // The claim's `UPDATE … WHERE id IN (subquery) RETURNING` builds a temporary b-tree:
    // in memory it costs a tenth of what a temporary file does.
    db.pragma("temp_store = MEMORY");
  } else {
    db = checkDatabaseOption(database);
  }
  try {
    migrateSqlite(db);
  } catch (e) {
    if (filename !== undefined) db.close();
    throw e;
  }
  return new SqliteDriver(db, filename !== undefined, pollIntervalMs);
}
