/**
 * Who may use the SQLite store's one connection, and when. better-sqlite3 is synchronous,
 * so each statement is atomic with respect to the event loop; only a transaction that
 * awaits a user handler spans event-loop turns, and a Mutex keeps every other use of the
 * connection out until it ends. Calls made from inside that transaction (a mutation
 * calling `pool.status`, or `enqueue` without `tx`) already own the connection: they run
 * inside it instead of waiting for the lock, which would never be released (deadlock).
 */
import type { Database, Transaction } from "better-sqlite3";
import type { TxOps } from "../../../driver/driver.js";
import { Mutex } from "../../../driver/mutex.js";
import { TransactionScope } from "../../../driver/transaction-scope.js";

/** Runs the driver's reads, writes and transactions on its connection, one user at a time. */
export class SqliteConnectionAccess {
  private readonly lock = new Mutex();
  /**
   * The transaction the current async context runs in. Work a handler starts (a timer, a
   * wake-up) inherits the context but may outlive the transaction: `open` tells.
   */
  private readonly txContext = new TransactionScope<{ open: boolean }>();
  /** Runs a function in a transaction (a savepoint when one is open): made once, not per write. */
  private readonly inTransaction: Transaction<(fn: () => unknown) => unknown>;

  /**
   * @param db the store's connection
   * @param txOps the operations of this driver's transactions (one connection, so one set)
   */
  constructor(
    private readonly db: Database,
    private readonly txOps: TxOps<Database>,
  ) {
    this.inTransaction = db.transaction((fn: () => unknown) => fn());
  }

  /** Whether the calling code runs inside one of our transactions (and so already holds the connection). */
  get insideTx(): boolean {
    return this.txContext.current() !== null;
  }

  /** Runs `fn` under the lock, after every earlier user of the connection. */
  locked<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.lock.run(fn);
  }

  /** Runs `fn` holding the connection: under the lock, or directly when already inside our transaction. */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.insideTx) return Promise.resolve().then(fn);
    return this.lock.run(fn);
  }

  /** Runs a short synchronous write transaction (a savepoint when nested in ours). */
  write<T>(fn: () => T): Promise<T> {
    const tx = this.inTransaction;
    return this.exclusive(() => (this.db.inTransaction ? tx(fn) : tx.immediate(fn)) as T);
  }

  /** Runs a synchronous read holding the connection. */
  read<T>(fn: () => T): Promise<T> {
    return this.exclusive(fn);
  }

  /** BEGIN IMMEDIATE ... COMMIT around `fn`, under the lock; nested in one of ours, a savepoint. */
  transaction<T>(fn: (ops: TxOps<Database>) => Promise<T>): Promise<T> {
    // Nested in one of our transactions (e.g. cancel() called by a mutation): a savepoint.
    if (this.insideTx) return this.txOps.savepoint(() => fn(this.txOps));
    return this.lock.run(() => {
      return this.txContext.run({ open: true }, async () => {
        const db = this.db;
        db.exec("BEGIN IMMEDIATE");
        try {
          const result = await fn(this.txOps);
          db.exec("COMMIT");
          return result;
        } catch (e) {
          if (db.inTransaction) db.exec("ROLLBACK");
          throw e;
        }
      });
    });
  }
}
