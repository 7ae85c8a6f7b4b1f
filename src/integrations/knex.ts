/**
 * `workpool/knex`: enqueue inside a Knex transaction, with the `pg` or `better-sqlite3`
 * client: `{ tx: knexTx(trx) }` inside `knex.transaction(async (trx) => ...)`. Knex does
 * not document a way to get a transaction's connection, so this wraps `trx.raw()` as a
 * transaction executor; the store checks it through it before writing.
 *
 * In handlers, Knex's `.connection(ctx.tx)` runs a query on the work's own transaction:
 * `await knex("orders").insert(row).connection(ctx.tx)`.
 */
import type { Knex } from "knex";
import { splitPlaceholders, transactionExecutor, type TransactionExecutor } from "../driver/tx-executor.js";
import { InvalidArgumentError } from "../errors.js";
import { describeValue } from "../checks.js";

const executors = new WeakMap<object, TransactionExecutor>();

/** The rows of a `raw()` result: pg gives `{ rows }`, better-sqlite3 an array for reads. */
function rowsOfRaw(result: unknown): unknown[] {
  if (Array.isArray(result)) return result;
  const rows = (result as { rows?: unknown } | null)?.rows;
  return Array.isArray(rows) ? rows : [];
}

/**
 * Wraps the `trx` of `knex.transaction(async (trx) => ...)` (or of `await knex.transaction()`)
 * for enqueue's `tx` option: the work is written in that transaction and exists iff it commits.
 */
export function knexTx(trx: Knex.Transaction): TransactionExecutor {
  // A Knex transaction is a function with properties.
  const t = trx as unknown as { isTransaction?: unknown; raw?: unknown; isCompleted?: unknown };
  if (typeof trx !== "function" || t.isTransaction !== true || typeof t.raw !== "function" || typeof t.isCompleted !== "function") {
    throw new InvalidArgumentError("tx", `must be the trx of a knex.transaction(async (trx) => ...) callback, got ${describeValue(trx)}`);
  }
  let executor = executors.get(trx);
  if (!executor) {
    executor = transactionExecutor(async (statement) => {
      if (trx.isCompleted()) throw new InvalidArgumentError("tx", "is a Knex transaction that has already committed or rolled back");
      // Knex binds `?` (and turns it into `$n` for pg); a literal `?` would need escaping.
      const { parts, values } = splitPlaceholders(statement);
      const text = parts.map((p) => p.replace(/\?/g, "\\?")).join("?");
      return rowsOfRaw(await trx.raw(text, values as Knex.RawBinding[]));
    });
    executors.set(trx, executor);
  }
  return executor;
}
