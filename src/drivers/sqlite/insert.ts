/**
 * Enqueue on SQLite: new work written on the store's connection, on the caller's own
 * connection inside whatever transaction it has open (`tx`, synchronously), or through a
 * transaction executor (an ORM's asynchronous transaction); then this process's workers
 * of the pool are woken.
 */
import type { Database } from "better-sqlite3";
import type { NewWork } from "../../driver/driver.js";
import { isTransactionExecutor, type TransactionExecutor } from "../../driver/tx-executor.js";
import { columnList, newWorkValues, REPLACED_SET, WORK_COLUMNS } from "../../driver/work-columns.js";
import { InvalidArgumentError } from "../../errors.js";
import type { SqliteConnectionAccess } from "./connection/connection-access.js";
import { checkTxConnection, checkTxOpen, mainFileOf } from "./connection/connection-checks.js";
import type { PoolWakeups } from "./connection/wakeups.js";
import { prepared, type Prepared } from "./statements.js";
import { insertThroughExecutor } from "./tx-executor-insert.js";

/**
 * The insert of `rows` new rows, with positional parameters: each row's values are
 * newWorkValues() (WORK_COLUMNS order), bound as one array, not an object of named properties.
 */
export function insertSql(rows: number): string {
  const tuple = `(${WORK_COLUMNS.map(() => "?").join(", ")}, 'pending')`;
  return `INSERT INTO workpool_work (${columnList(WORK_COLUMNS)}, state) VALUES ${Array.from({ length: rows }, () => tuple).join(", ")}`;
}

/** The upsert on the unique index of pending unique keys. */
const ON_UNIQUE = "ON CONFLICT (pool, unique_key) WHERE state = 'pending' AND unique_key IS NOT NULL DO UPDATE SET";

/** The statements of an enqueue. */
export const INSERT_SQL = {
  insert: insertSql(1),
  // A row with a unique key: pending work that has it is kept (a write of nothing, so that
  // RETURNING gives its id) or has its fields replaced (and unparked: its key may have
  // changed); either way its id comes back.
  insertUniqueKeep: `${insertSql(1)} ${ON_UNIQUE} unique_key = excluded.unique_key RETURNING id`,
  insertUniqueReplace: `${insertSql(1)} ${ON_UNIQUE} ${REPLACED_SET}, parked = 0 RETURNING id`,
} as const;

/**
 * Inserts `rows` with `sql` inside the caller's transaction and returns the id each
 * stands for. A row with a unique key is an upsert on the unique index of pending keys,
 * under SQLite's write lock: its RETURNING gives the new row's id or the pending one's.
 */
function insertRows(sql: Prepared<typeof INSERT_SQL>, rows: readonly NewWork[]): string[] {
  return rows.map((row) => {
    if (row.uniqueKey === null) {
      sql.insert.run(newWorkValues(row));
      return row.id;
    }
    const upsert = row.onConflict === "replace" ? sql.insertUniqueReplace : sql.insertUniqueKeep;
    return (upsert.get(newWorkValues(row)) as { id: string }).id;
  });
}

/** Writes new work for the SQLite driver (its insertWork). */
export class SqliteWorkInserter {
  private readonly sql: Prepared<typeof INSERT_SQL>;

  /**
   * @param db the store's connection
   * @param access runs writes on it one user at a time
   * @param wakeups this process's workers to wake once work is written
   * @param isClosed whether the store has been closed
   */
  constructor(
    private readonly db: Database,
    private readonly access: SqliteConnectionAccess,
    private readonly wakeups: PoolWakeups,
    private readonly isClosed: () => boolean,
  ) {
    this.sql = prepared(db, INSERT_SQL);
  }

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
        first?.uniqueKey != null ? INSERT_SQL[first.onConflict === "replace" ? "insertUniqueReplace" : "insertUniqueKeep"] : null;
      return insertThroughExecutor(tx, rows, { rows: insertSql, unique }, mainFileOf(this.db)).then(
        (ids) => (this.wakeups.wakeSoon(rows), ids),
      );
    }
    if (tx !== undefined) {
      checkTxConnection(tx);
      this.checkSameDatabase(tx);
      checkTxOpen(tx);
      const sql = prepared(tx, INSERT_SQL);
      // db.transaction nests as a savepoint when the caller already has one open.
      const ids = tx.transaction(() => insertRows(sql, rows))();
      this.wakeups.wakeSoon(rows);
      return Promise.resolve(ids);
    }
    // One plain row is one statement, atomic on its own: it commits without BEGIN and COMMIT around it.
    const single = rows.length === 1 && rows[0]!.uniqueKey === null;
    const written = single ? this.access.exclusive(() => insertRows(this.sql, rows)) : this.access.write(() => insertRows(this.sql, rows));
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
