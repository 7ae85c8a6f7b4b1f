/**
 * The PostgreSQL store's life: its schema migrated once, its close run once, and, while it
 * is open, where its statements run (the held client for autocommit, the pool for
 * transactions and VACUUM). Every use after close() fails with the closed-store error.
 */
import type { Pool } from "pg";
import type { Queryable } from "../connection.js";
import { closedError, connectError, isTransientPgError } from "./errors.js";
import type { Listener } from "./listener.js";
import { migratePostgres } from "../migrate.js";
import type { Notifier } from "./notifier.js";
import type { PinnedConnection } from "./pinned.js";
import type { RunningWorkers } from "../../../driver/running-workers.js";

/** The connections and parts of a store that its close ends. */
export interface PgStoreResources {
  /** The connection pool for statements and transactions. */
  pool: Pool;
  /** Whether close() ends `pool` (true when the store created it). */
  ownsPool: boolean;
  /** The client held for autocommit statements (see pinned.ts). */
  pinned: PinnedConnection;
  /** The LISTEN side of the store. */
  listener: Listener;
  /** The NOTIFY side of the store. */
  notifier: Notifier;
  /** Schema holding the tables (already validated). */
  schema: string;
  /** The connect timeout the store set on its connections, ms; null when the given pool has its own. */
  connectTimeoutMs: number | null;
  /** The workers started on the store: close() stops them while the store still works. */
  workers: RunningWorkers;
}

/** Migrates and closes a PostgreSQL store once each, and hands out its connections while it is open. */
export class PgStoreLifecycle {
  private migrated: Promise<void> | null = null;
  private closing: Promise<void> | null = null;
  /** Set once the workers stopped and the connections are being closed. */
  private shut = false;

  constructor(private readonly res: PgStoreResources) {}

  /** Whether the store is closed (or its connections are closing). */
  get closed(): boolean {
    return this.shut;
  }

  /** Creates or upgrades the schema. Runs once per store; a failed run is retried on the next call. */
  migrate(): Promise<void> {
    if (this.shut) return Promise.reject(closedError());
    this.migrated ??= migratePostgres(this.res.pool, this.res.schema).catch((e: unknown) => {
      this.migrated = null;
      throw isTransientPgError(e) ? connectError(e, this.res.connectTimeoutMs) : e;
    });
    return this.migrated;
  }

  /** Stops the store's workers, then closes the LISTEN connection and, if the store created it, the pool. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.res.workers.stopAll();
      this.shut = true;
      await this.res.notifier.close();
      this.res.pinned.close();
      await this.res.listener.close();
      if (this.res.ownsPool) await this.res.pool.end();
    })();
    return this.closing;
  }

  /** Throws the closed-store error once close() has been called. */
  checkOpen(): void {
    if (this.shut) throw closedError();
  }

  /** Where autocommit statements run, once the store is known to be open: the held client or the pool. */
  get db(): Queryable {
    this.checkOpen();
    return this.res.pinned;
  }

  /** The pool itself, once the store is known to be open: for transactions and VACUUM. */
  get openPool(): Pool {
    this.checkOpen();
    this.res.pinned.makeRoom();
    return this.res.pool;
  }
}
