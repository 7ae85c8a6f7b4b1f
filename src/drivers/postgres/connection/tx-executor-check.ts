/**
 * Checks an enqueue's `tx` that is a transaction executor (an ORM's transaction wrapped
 * by an adapter, see driver/tx-executor.ts) before anything is written, as tx-check.ts
 * does for pg clients: the executor must run on the store's database and be inside an
 * open transaction. Both are asked of the server through the executor itself: its
 * identity once per executor, and a SAVEPOINT (which only a transaction block accepts)
 * on every enqueue, since the library's transaction may have ended since.
 */
import type { QueryConfig, QueryResult, QueryResultRow } from "pg";
import { runThrough, rowsOf, type TransactionExecutor } from "../../../driver/tx-executor.js";
import { InvalidArgumentError } from "../../../errors.js";
import { errorText } from "../../../error-text.js";
import type { Queryable } from "../connection.js";

/** The database and server an executor's connection is on (see tx-check.ts). */
export interface ExecutorIdentity {
  database: string;
  serverStartedAt: string;
}

const IDENTITY_SQL = "SELECT current_database() AS database, pg_postmaster_start_time()::text AS started";

function codeOf(e: unknown): unknown {
  return (e as { code?: unknown } | null)?.code;
}

function brokenExecutor(detail: string): InvalidArgumentError {
  return new InvalidArgumentError("tx", `is a transaction executor that did not answer as a PostgreSQL transaction: ${detail}`);
}

/** Reads the executor's database and server; refuses an executor whose answer is not that. */
export async function readExecutorIdentity(executor: TransactionExecutor): Promise<ExecutorIdentity> {
  let answer: unknown;
  try {
    answer = await runThrough(executor, { text: IDENTITY_SQL, values: [], placeholders: "$n", wantsRows: true });
  } catch (e) {
    if (codeOf(e) === "25P02") throw failedTransaction();
    if (typeof codeOf(e) === "string") throw e;
    throw brokenExecutor(errorText(e));
  }
  const row = rowsOf(answer)?.[0];
  if (typeof row?.database !== "string" || typeof row.started !== "string") throw brokenExecutor("its identity query returned no row");
  return { database: row.database, serverStartedAt: row.started };
}

function failedTransaction(): InvalidArgumentError {
  return new InvalidArgumentError("tx", "is in a failed transaction (an earlier statement in it errored); roll it back");
}

/** Refuses an executor that is not inside an open, healthy transaction block. */
export async function checkExecutorInTransaction(executor: TransactionExecutor): Promise<void> {
  const savepoint = (text: string) => runThrough(executor, { text, values: [], placeholders: "$n", wantsRows: false });
  try {
    await savepoint("SAVEPOINT workpool_tx_check");
  } catch (e) {
    if (codeOf(e) === "25P01") {
      throw new InvalidArgumentError(
        "tx",
        "has no open transaction: enqueue inside the library's transaction callback, or leave tx out to commit the work at once",
      );
    }
    if (codeOf(e) === "25P02") throw failedTransaction();
    throw e;
  }
  await savepoint("RELEASE SAVEPOINT workpool_tx_check");
}

/**
 * The executor as a {@link Queryable}, for the driver's statements whose rows it does not
 * read (the insert). Statement names are dropped: the library prepares as it sees fit.
 */
export function executorQueryable(executor: TransactionExecutor): Queryable {
  return {
    async query<R extends QueryResultRow>(config: QueryConfig): Promise<QueryResult<R>> {
      // A statement with RETURNING answers with rows the caller reads (a unique insert's id).
      const wantsRows = /\bRETURNING\b/i.test(config.text);
      const answer = await runThrough(executor, { text: config.text, values: config.values ?? [], placeholders: "$n", wantsRows });
      const rows = (rowsOf(answer) ?? []) as R[];
      return { rows, rowCount: rows.length, command: "", oid: 0, fields: [] };
    },
  };
}
