/**
 * `workpool/drizzle`: enqueue inside a Drizzle ORM transaction.
 *
 * - PostgreSQL (node-postgres driver): `{ tx: drizzleTx(tx) }` inside `db.transaction(async (tx) => ...)`.
 *   Drizzle does not expose the pg client of a transaction, so this wraps `tx.execute()`
 *   as a transaction executor; the store checks it through it before writing.
 * - SQLite (better-sqlite3 driver): `{ tx: drizzleSqliteTx(db) }` inside `db.transaction((tx) => ...)`.
 *   Drizzle's SQLite transactions run synchronously on the one connection `db.$client`,
 *   which is what the SQLite store takes as `tx`.
 *
 * In handlers, `drizzle(ctx.tx)` gives a Drizzle database on the work's own transaction.
 */
import type { Database } from "better-sqlite3";
import { DrizzleQueryError, is, sql, type SQL } from "drizzle-orm";
import { PgTransaction } from "drizzle-orm/pg-core";
import { splitPlaceholders, transactionExecutor, type ExecutorStatement, type TransactionExecutor } from "../driver/tx-executor.js";
import { InvalidArgumentError } from "../errors.js";
import { describeValue } from "../checks.js";

/** What the adapter uses of a Drizzle PostgreSQL transaction: running one SQL statement. */
export interface DrizzlePgTransactionLike {
  execute(query: SQL): PromiseLike<unknown>;
}

/** What the adapter uses of a Drizzle better-sqlite3 database: its connection. */
export interface DrizzleSqliteDatabaseLike {
  readonly $client: Database;
}

const executors = new WeakMap<object, TransactionExecutor>();

/** The statement as Drizzle SQL: the text between placeholders raw, the values as parameters. */
function toDrizzleSql(statement: ExecutorStatement): SQL {
  const { parts, values } = splitPlaceholders(statement);
  const chunks: SQL[] = [];
  parts.forEach((part, i) => {
    chunks.push(sql.raw(part));
    if (i < values.length) chunks.push(sql`${sql.param(values[i])}`);
  });
  return sql.join(chunks);
}

/**
 * Wraps the `tx` of a Drizzle PostgreSQL `db.transaction(async (tx) => ...)` for enqueue's
 * `tx` option: the work is written in that transaction and exists iff it commits.
 */
export function drizzleTx(tx: DrizzlePgTransactionLike): TransactionExecutor {
  if (!is(tx, PgTransaction)) {
    throw new InvalidArgumentError(
      "tx",
      `must be the tx of a Drizzle PostgreSQL db.transaction(async (tx) => ...) callback, got ${describeValue(tx)}`,
    );
  }
  let executor = executors.get(tx);
  if (!executor) {
    executor = transactionExecutor(async (statement) => {
      try {
        const result = (await tx.execute(toDrizzleSql(statement))) as { rows?: unknown } | unknown[];
        return Array.isArray(result) ? result : (result.rows ?? []);
      } catch (e) {
        // Drizzle wraps the driver's error; the store reads the driver's code (SQLSTATE).
        throw e instanceof DrizzleQueryError && e.cause !== undefined ? e.cause : e;
      }
    });
    executors.set(tx, executor);
  }
  return executor;
}

/**
 * The better-sqlite3 connection of a Drizzle SQLite database, for enqueue's `tx` option
 * inside its `db.transaction((tx) => ...)`: pass the database `db`, not `tx`.
 */
export function drizzleSqliteTx(db: DrizzleSqliteDatabaseLike): Database {
  const client = (db as Partial<DrizzleSqliteDatabaseLike> | null)?.$client;
  if (typeof client !== "object" || client === null || typeof (client as Partial<Database>).prepare !== "function") {
    throw new InvalidArgumentError(
      "tx",
      `must be a Drizzle better-sqlite3 database (drizzle(new Database(file))), whose $client the transaction runs on; pass db, not the transaction's tx; got ${describeValue(db)}`,
    );
  }
  return client;
}
