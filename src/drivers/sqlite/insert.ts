/**
 * Enqueue on SQLite: new work written on the store's connection, on the caller's own
 * connection inside whatever transaction it has open (`tx`, synchronously), or through a
 * transaction executor (an ORM's asynchronous transaction); then this process's workers
 * of the pool are woken.
 */
import type { Database } from "better-sqlite3";
import type { NewWork } from "../../driver/driver.js";
import { isTransactionExecutor, type TransactionExecutor } from "../../driver/tx-executor.js";
import { InvalidArgumentError } from "../../errors.js";
import { checkTxConnection, checkTxOpen, mainFileOf } from "./connection-checks.js";
import type { SqliteConnectionAccess } from "./connection-access.js";
import { newWorkValues } from "../../driver/work-columns.js";
import { statementsFor, type Statements } from "./statements.js";
import { insertThroughExecutor } from "./tx-executor-insert.js";
import type { PoolWakeups } from "./wakeups.js";

/**
 * Inserts `rows` with `stmts` inside the caller's transaction and returns the id each
 * stands for. A row with a unique key is an upsert on the unique index of pending keys,
 * under SQLite's write lock: its RETURNING gives the new row's id or the pending one's.
 */
function insertRows(stmts: Statements, rows: readonly NewWork[]): string[] {
  return rows.map((row) => {
    if (row.uniqueKey === null) {
      stmts.insertWorkRow.run(newWorkValues(row));
      return row.id;
    }
    const upsert = row.onConflict === "replace" ? stmts.insertUniqueReplace : stmts.insertUniqueKeep;
    return (upsert.get(newWorkValues(row)) as { id: string }).id;
  });
}

/** Writes new work for the SQLite driver (its insertWork). */
export class SqliteWorkInserter {
  /**
   * @param db the store's connection
   * @param stmts the statements prepared on it
   * @param access runs writes on it one user at a time
   * @param wakeups this process's workers to wake once work is written
   * @param isClosed whether the store has been closed
   */
  constructor(
    private readonly db: Database,
    private readonly stmts: Statements,
    private readonly access: SqliteConnectionAccess,
    private readonly wakeups: PoolWakeups,
    private readonly isClosed: () => boolean,
  ) {}

  /**
   * With `tx`, writes synchronously on the caller's connection (inside whatever
   * transaction it has open) and throws synchronously; the returned promise is settled.
   * A transaction executor (an ORM's asynchronous transaction) is written through instead.
   */
  insertWork(rows: readonly NewWork[], tx?: Database | TransactionExecutor): Promise<string[]> {
    if (isTransactionExecutor(tx)) {
      if (this.isClosed()) return Promise.reject(new Error("workpool: this SQLite store is closed"));
      const first = rows[0];
      const unique =
        first?.uniqueKey != null ? (first.onConflict === "replace" ? this.stmts.insertUniqueReplace : this.stmts.insertUniqueKeep) : null;
      return insertThroughExecutor(tx, rows, unique?.source ?? null, mainFileOf(this.db)).then((ids) => (this.wakeups.wakeSoon(rows), ids));
    }
    if (tx !== undefined) {
      checkTxConnection(tx);
      this.checkSameDatabase(tx);
      checkTxOpen(tx);
      const stmts = statementsFor(tx);
      // db.transaction nests as a savepoint when the caller already has one open.
      const ids = tx.transaction(() => insertRows(stmts, rows))();
      this.wakeups.wakeSoon(rows);
      return Promise.resolve(ids);
    }
    // One plain row is one statement, atomic on its own: it commits without BEGIN and COMMIT around it.
    const single = rows.length === 1 && rows[0]!.uniqueKey === null;
    const written = single
      ? this.access.exclusive(() => insertRows(this.stmts, rows))
      : this.access.write(() => insertRows(this.stmts, rows));
    return written.then((ids) => (this.wakeups.wakeSoon(rows), ids));
  }

  /** A `tx` on another database would put the work where no worker of this store looks. */
  private checkSameDatabase(tx: Database): void {
    if (tx === this.db) return;
    const theirs = mainFileOf(tx);
    const ours = mainFileOf(this.db);
    if (theirs === "" || theirs !== ours) {
      throw new InvalidArgumentError(
        "tx",
        `is a connection to ${theirs ? `"${theirs}"` : "an in-memory database"}, but this store uses ${ours ? `"${ours}"` : "an in-memory database"}; pass a connection to the store's database file`,
      );
    }
  }
}
