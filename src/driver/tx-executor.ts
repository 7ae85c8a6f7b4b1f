/**
 * The transaction executor: how a `tx` that is not the database driver's own handle (an
 * ORM's transaction object) reaches a store. The store never needs to know the ORM: an
 * adapter wraps the ORM's open transaction in one function that runs one SQL statement
 * in that transaction and returns its rows, and the store speaks its own SQL through it.
 *
 * A store still checks every executor before it writes (same database as the store, a
 * transaction open), by probing through the executor, as it does for raw connections.
 * `workpool/drizzle`, `workpool/kysely`, `workpool/knex` and `workpool/prisma` build
 * executors; {@link transactionExecutor} builds one for any other library.
 */

/** Brand under which a {@link TransactionExecutor} carries its statement runner. */
export const TX_EXECUTOR = Symbol.for("workpool.txExecutor");

/** One statement a store runs through a {@link TransactionExecutor}. */
export interface ExecutorStatement {
  /**
   * The SQL, in the database's own parameter syntax: `$1`…`$n` on PostgreSQL (a number
   * may appear more than once, in any order), `?` on SQLite (one per value, in order).
   */
  readonly text: string;
  /** The parameter values: strings, numbers, null, and arrays of those (PostgreSQL). */
  readonly values: readonly unknown[];
  /** Which syntax `text` uses; see {@link splitPlaceholders} for libraries that want another. */
  readonly placeholders: "$n" | "?";
  /**
   * Whether the store reads the statement's rows. When false the executor may run it as
   * a command and resolve with anything (some libraries cannot read every column type).
   */
  readonly wantsRows: boolean;
}

/** A row as an executor returns it: column name to value. */
export type ExecutorRow = Record<string, unknown>;

/**
 * Runs one statement inside the caller's open transaction and resolves with its rows.
 * On a database error it rejects with an error whose `code` is the database's error code
 * (PostgreSQL's SQLSTATE such as `25P01`, SQLite's such as `SQLITE_ERROR`) where the
 * library reports one, so the store can tell "no transaction open" from other errors.
 */
export type ExecutorRun = (statement: ExecutorStatement) => Promise<readonly ExecutorRow[] | unknown>;

/** A `tx` for enqueue: an open transaction of some library, wrapped for the store. */
export interface TransactionExecutor {
  /** The statement runner (see {@link ExecutorRun}). */
  readonly [TX_EXECUTOR]: ExecutorRun;
}

/**
 * Wraps a function that runs one statement in an open transaction as a `tx` workpool's
 * stores accept. Use it to connect a library without a ready-made adapter.
 */
export function transactionExecutor(run: ExecutorRun): TransactionExecutor {
  if (typeof run !== "function") throw new TypeError("transactionExecutor(run): run must be a function");
  return Object.freeze({ [TX_EXECUTOR]: run });
}

/** Whether `value` is a {@link TransactionExecutor}. */
export function isTransactionExecutor(value: unknown): value is TransactionExecutor {
  return typeof value === "object" && value !== null && typeof (value as Partial<TransactionExecutor>)[TX_EXECUTOR] === "function";
}

/**
 * A statement cut at its placeholders: `parts` has one entry more than `values`, and the
 * statement is `parts[0] + values[0] + parts[1] + ...`. Values are repeated where a `$n`
 * repeats. For libraries whose raw-SQL call takes `?` (join the parts with "?") or
 * interleaved fragments and parameters.
 */
export function splitPlaceholders(statement: ExecutorStatement): { parts: string[]; values: unknown[] } {
  const pattern = statement.placeholders === "$n" ? /\$(\d+)/g : /\?/g;
  const parts: string[] = [];
  const values: unknown[] = [];
  let last = 0;
  let next = 0;
  for (const match of statement.text.matchAll(pattern)) {
    parts.push(statement.text.slice(last, match.index));
    const index = match[1] === undefined ? next++ : Number(match[1]) - 1;
    if (index < 0 || index >= statement.values.length) {
      throw new RangeError(`statement has placeholder ${match[0]} but ${statement.values.length} values`);
    }
    values.push(statement.values[index]);
    last = match.index + match[0].length;
  }
  parts.push(statement.text.slice(last));
  return { parts, values };
}

/** The execution of a statement through `executor`. */
export function runThrough(executor: TransactionExecutor, statement: ExecutorStatement): Promise<unknown> {
  return executor[TX_EXECUTOR](statement);
}

/** The rows an executor answered with, or null when the answer is not a list of rows. */
export function rowsOf(answer: unknown): ExecutorRow[] | null {
  if (!Array.isArray(answer)) return null;
  return answer.every((r) => typeof r === "object" && r !== null) ? (answer as ExecutorRow[]) : null;
}
