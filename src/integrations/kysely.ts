/**
 * `workpool/kysely`: enqueue inside a Kysely transaction, with PostgresDialect or
 * SqliteDialect: `{ tx: kyselyTx(trx) }` inside `db.transaction().execute(async (trx) => ...)`.
 * Kysely does not expose a transaction's connection, so this wraps `trx.executeQuery()`
 * as a transaction executor; the store checks it through it before writing.
 *
 * In handlers: on PostgreSQL, `new Kysely({ dialect: new PostgresDialect({ pool: kyselyPool(ctx.tx) }) })`
 * runs Kysely on the work's own transaction; on SQLite, `new SqliteDialect({ database: ctx.tx })`.
 */
import type { PoolClient } from "pg";
import { CompiledQuery, type PostgresPool, type PostgresPoolClient, type Transaction } from "kysely";
import { transactionExecutor, type TransactionExecutor } from "../driver/tx-executor.js";
import { InvalidArgumentError } from "../errors.js";
import { describeValue } from "../checks.js";

const executors = new WeakMap<object, TransactionExecutor>();

/**
 * Wraps the `trx` of a Kysely `db.transaction().execute(async (trx) => ...)` (or a
 * controlled transaction) for enqueue's `tx` option: the work is written in that
 * transaction and exists iff it commits.
 */
export function kyselyTx<DB>(trx: Transaction<DB>): TransactionExecutor {
  if (typeof trx !== "object" || trx === null || (trx as { isTransaction?: unknown }).isTransaction !== true) {
    throw new InvalidArgumentError(
      "tx",
      `must be the trx of a Kysely db.transaction().execute(async (trx) => ...) callback, got ${describeValue(trx)}`,
    );
  }
  let executor = executors.get(trx);
  if (!executor) {
    // The text goes to the dialect's driver unchanged: it is in that database's syntax.
    executor = transactionExecutor(
      async (statement) => (await trx.executeQuery(CompiledQuery.raw(statement.text, [...statement.values]))).rows,
    );
    executors.set(trx, executor);
  }
  return executor;
}

/**
 * A Kysely `PostgresPool` that hands out one pg client and never releases or ends it:
 * `ctx.tx` of a mutation or onComplete handler, so Kysely runs inside the work's
 * transaction. Do not start a Kysely transaction on it (the work's transaction is
 * already open); use `trx.savepoint()` style nesting only through `ctx.tx`.
 */
export function kyselyPool(client: PoolClient): PostgresPool {
  const held: PostgresPoolClient = {
    query: client.query.bind(client) as PostgresPoolClient["query"],
    release: () => undefined,
  };
  // No `Client`: Kysely then has no way to cancel a query from another connection.
  // `options` is part of the pool type from Kysely 0.29 on; a named object fits both lines.
  const pool = { connect: () => Promise.resolve(held), end: () => Promise.resolve(), options: {} };
  return pool;
}
