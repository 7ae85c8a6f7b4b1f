/**
 * Where the PostgreSQL driver's statements run, for every part of it: autocommit
 * statements on the held client or the pool, calls the application makes from inside a
 * handler's transaction on that transaction's client, transactions and VACUUM on the pool.
 * Each is asked for when a statement is about to run, so a closed store refuses it.
 */
import type { Pool } from "pg";
import type { Queryable } from "../connection.js";
import type { PgStoreLifecycle } from "./lifecycle.js";
import type { PgTransactions } from "./transactions.js";

/** The connections of one store. */
export class PgConnections {
  constructor(
    private readonly lifecycle: PgStoreLifecycle,
    private readonly transactions: PgTransactions,
  ) {}

  /** Where a call made on behalf of the application runs: inside the handler's transaction, or as {@link db}. */
  get app(): Queryable {
    return this.transactions.joinedClient() ?? this.lifecycle.db;
  }

  /** Where autocommit statements run, once the store is known to be open: the held client or the pool. */
  get db(): Queryable {
    return this.lifecycle.db;
  }

  /** The pool itself, once the store is known to be open: for transactions and VACUUM. */
  get pool(): Pool {
    return this.lifecycle.openPool;
  }
}
