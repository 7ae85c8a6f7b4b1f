/**
 * Checks of better-sqlite3 connections handed to the store: as its `database`, or as an
 * enqueue's `tx`. A wrong object would otherwise fail deep inside with a TypeError, or
 * (for `tx`) write work outside the caller's transaction.
 */
import type { Database } from "better-sqlite3";
import { InvalidArgumentError } from "../../../errors.js";
import { describeValue } from "../../../checks.js";

/** Whether `value` looks like a better-sqlite3 Database (duck-typed: the app may load its own copy). */
function isConnection(value: unknown): value is Database {
  const v = value as Partial<Record<keyof Database, unknown>> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.prepare === "function" &&
    typeof v.transaction === "function" &&
    typeof v.pragma === "function" &&
    typeof v.exec === "function" &&
    typeof v.inTransaction === "boolean" &&
    typeof v.open === "boolean"
  );
}

/** Checks the store's `database` option: an open better-sqlite3 connection. */
export function checkDatabaseOption(value: unknown): Database {
  if (!isConnection(value)) {
    throw new InvalidArgumentError("database", `must be an open better-sqlite3 Database (new Database(file)), got ${describeValue(value)}`);
  }
  if (!value.open) throw new InvalidArgumentError("database", "is a closed connection; pass an open one");
  return value;
}

/**
 * Checks that an enqueue's `tx` is an open better-sqlite3 connection. With
 * {@link checkTxOpen}: the work is written into its transaction and exists only if it commits.
 */
export function checkTxConnection(value: unknown): Database {
  if (!isConnection(value)) {
    throw new InvalidArgumentError(
      "tx",
      `must be a better-sqlite3 Database inside an open transaction (db.transaction(...)), got ${describeValue(value)}`,
    );
  }
  if (!value.open) throw new InvalidArgumentError("tx", "is a closed connection");
  return value;
}

/** Checks that an enqueue's `tx` (already known to be a connection) has a transaction open. */
export function checkTxOpen(tx: Database): void {
  if (!tx.inTransaction) {
    throw new InvalidArgumentError(
      "tx",
      "has no open transaction; call enqueue inside db.transaction(() => ...)() or after BEGIN, or leave tx out to commit the work at once",
    );
  }
}

const TRANSIENT_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|PROTOCOL|NOMEM|INTERRUPT)/;

/**
 * Whether an error from the store is about the database rather than the data written:
 * the same write may well succeed later (another process holds the lock, the disk is
 * full, the connection was closed).
 */
export function isTransientSqliteError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === "string" && TRANSIENT_CODES.test(code)) return true;
  const message = e instanceof Error ? e.message : "";
  return /database connection is not open|store is closed/.test(message);
}

const mainFiles = new WeakMap<Database, string>();

/** Absolute path of a connection's main database file ("" for an in-memory database). */
export function mainFileOf(db: Database): string {
  let file = mainFiles.get(db);
  if (file === undefined) {
    const list = db.pragma("database_list") as { name: string; file: string }[];
    file = list.find((d) => d.name === "main")?.file ?? "";
    mainFiles.set(db, file);
  }
  return file;
}
