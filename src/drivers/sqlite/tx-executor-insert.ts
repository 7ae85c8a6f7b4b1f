/**
 * Enqueue through a transaction executor (an ORM's asynchronous transaction wrapped by an
 * adapter, see driver/tx-executor.ts) on SQLite. The rows go in through the executor,
 * so they exist only if the ORM's transaction commits. Checked first, through the
 * executor: its connection is on the store's file, and it is inside a transaction.
 *
 * SQLite has no read-only way to ask whether a connection is inside a transaction, so
 * the probe is `BEGIN`, which fails inside one; outside one it starts a transaction,
 * which the probe at once rolls back before refusing.
 */
import { runThrough, rowsOf, type TransactionExecutor } from "../../driver/tx-executor.js";
import type { NewWork } from "../../driver/driver.js";
import { InvalidArgumentError } from "../../errors.js";
import { errorText } from "../../error-text.js";
import { newWorkValues } from "../../driver/work-columns.js";

/** Most rows in one INSERT (16 parameters each, well under SQLite's 32766 parameters). */
const ROWS_PER_STATEMENT = 500;

function exec(executor: TransactionExecutor, text: string, values: readonly unknown[] = [], wantsRows = false): Promise<unknown> {
  return runThrough(executor, { text, values, placeholders: "?", wantsRows });
}

/** The main database file the executor's connection is on ("" for an in-memory database). */
async function mainFile(executor: TransactionExecutor): Promise<string> {
  let answer: unknown;
  try {
    answer = await exec(executor, "SELECT file FROM pragma_database_list WHERE name = 'main'", [], true);
  } catch (e) {
    throw new InvalidArgumentError("tx", `is a transaction executor that did not answer as an SQLite connection: ${errorText(e)}`);
  }
  const file = rowsOf(answer)?.[0]?.file;
  if (typeof file !== "string")
    throw new InvalidArgumentError("tx", "is a transaction executor whose SQLite connection named no main file");
  return file;
}

async function checkInTransaction(executor: TransactionExecutor): Promise<void> {
  try {
    await exec(executor, "BEGIN");
  } catch (e) {
    if (/within a transaction/.test(errorText(e))) return;
    throw e;
  }
  await exec(executor, "ROLLBACK");
  throw new InvalidArgumentError(
    "tx",
    "has no open transaction: enqueue inside the library's transaction callback, or leave tx out to commit the work at once",
  );
}

/** The insert statements a batch may need, positional, bound with newWorkValues(). */
export interface InsertSql {
  /** The insert of a given number of rows. */
  rows(count: number): string;
  /** For a row with a uniqueKey: the upsert that keeps or replaces the pending work with that key, returning its id. */
  unique: string | null;
}

/**
 * Checks `executor` and inserts `rows` through it; resolves with the id each row stands
 * for (for a row with a uniqueKey: the pending work's that has the key, if any). A batch
 * larger than one statement is written inside a savepoint, so it is all in the caller's
 * transaction or none of it.
 */
export async function insertThroughExecutor(
  executor: TransactionExecutor,
  rows: readonly NewWork[],
  sql: InsertSql,
  storeFile: string,
): Promise<string[]> {
  const theirs = await mainFile(executor);
  if (theirs === "" || theirs !== storeFile) {
    throw new InvalidArgumentError(
      "tx",
      `runs on ${theirs ? `"${theirs}"` : "an in-memory database"}, but this store uses ${storeFile ? `"${storeFile}"` : "an in-memory database"}; use a connection to the store's database file`,
    );
  }
  await checkInTransaction(executor);
  if (sql.unique !== null && rows.length === 1) return [await insertUnique(executor, rows[0]!, sql.unique)];
  const chunks: NewWork[][] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) chunks.push(rows.slice(i, i + ROWS_PER_STATEMENT));
  const inSavepoint = chunks.length > 1;
  if (inSavepoint) await exec(executor, "SAVEPOINT workpool_enqueue");
  try {
    for (const chunk of chunks) await exec(executor, sql.rows(chunk.length), chunk.flatMap(newWorkValues));
  } catch (e) {
    if (inSavepoint) await exec(executor, "ROLLBACK TO workpool_enqueue");
    throw e;
  } finally {
    if (inSavepoint) await exec(executor, "RELEASE workpool_enqueue");
  }
  return rows.map((r) => r.id);
}

/** Inserts one row with a uniqueKey, or keeps or replaces the pending work that has it; returns that work's id. */
async function insertUnique(executor: TransactionExecutor, row: NewWork, uniqueSql: string): Promise<string> {
  const answer = await exec(executor, uniqueSql, newWorkValues(row), true);
  const id = rowsOf(answer)?.[0]?.id;
  if (typeof id !== "string") throw new Error("workpool: the unique insert through the transaction executor returned no id");
  return id;
}
