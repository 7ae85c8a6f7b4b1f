/**
 * The PostgreSQL driver's transactions: BEGIN ... COMMIT on a client of the pool, and
 * which of them the current async context runs inside, so that calls a handler makes to
 * the pool from inside its transaction run on that transaction's client (a transaction
 * opened there is a savepoint of it).
 */
import type { Pool, PoolClient } from "pg";
import type { TxOps } from "../../../driver/driver.js";
import { Mutex } from "../../../driver/mutex.js";
import { TransactionScope } from "../../../driver/transaction-scope.js";
import { inTransaction } from "../connection.js";

/** One of our open transactions, as seen by code running inside it. */
interface OpenTx {
  ops: TxOps<PoolClient>;
  /** False once the transaction's function settled: later calls must not join it. */
  open: boolean;
  /** Nested transactions (savepoints) on one client take turns. */
  nested: Mutex;
}

/** Runs the driver's transactions and knows which one the calling code runs inside. */
export class PgTransactions {
  /** The transaction the current async context runs in, if any. */
  private readonly inside = new TransactionScope<OpenTx>();

  /** @param opsOf the operations of a transaction on `client` (inside BEGIN) */
  constructor(private readonly opsOf: (client: PoolClient) => TxOps<PoolClient>) {}

  /** The client of our transaction the caller runs inside (a handler calling the pool), if still open. */
  joinedClient(): PoolClient | null {
    return this.inside.current()?.ops.tx ?? null;
  }

  /**
   * BEGIN ... COMMIT on a client of the pool `openPool` returns; nested in one of ours
   * (cancel() from a mutation), a savepoint.
   */
  async run<T>(openPool: () => Pool, fn: (ops: TxOps<PoolClient>) => Promise<T>): Promise<T> {
    const outer = this.inside.current();
    if (outer) {
      // A savepoint; code inside it opens its own savepoints in turn (its own scope and lock),
      // so a transaction nested two deep does not wait for the one it runs inside.
      return outer.nested.run(() =>
        outer.ops.savepoint(() => this.inside.run({ ops: outer.ops, open: true, nested: new Mutex() }, () => fn(outer.ops))),
      );
    }
    return inTransaction(openPool(), async (client) => {
      const tx: OpenTx = { ops: this.opsOf(client), open: true, nested: new Mutex() };
      return this.inside.run(tx, () => fn(tx.ops));
    });
  }
}
