/**
 * The SQLite driver: one better-sqlite3 connection, WAL, BEGIN IMMEDIATE transactions.
 *
 * Why it is shaped this way:
 * - better-sqlite3 is synchronous, so each statement is atomic with respect to the event
 *   loop. Only a transaction that awaits a user handler spans event-loop turns; a Mutex
 *   keeps every other use of the connection out until it ends.
 * - BEGIN IMMEDIATE takes SQLite's write lock at the start. That lock is the per-pool
 *   (in fact per-file) lock under which `claim` counts running work, so the global
 *   maxParallelism holds across every process sharing the file.
 * - Enqueue with `tx` runs synchronously on the caller's connection, so it works inside
 *   `db.transaction(() => ...)()` and rolls back with it.
 * - Calls made from inside a handler's transaction (a mutation calling `pool.status`, or
 *   `enqueue` without `tx`) already own the connection: they run inside that transaction
 *   instead of waiting for the lock, which would never be released (deadlock).
 */
import type { Database, Transaction } from "better-sqlite3";
import type { CancelableFilter, PoolLimitChange, PoolRead, WorkDetailRow, WorkListQuery, WorkListRow } from "../../driver/admin-ops.js";
import {
  DRIVER,
  type AttemptRef,
  type ClaimOptions,
  type ClaimResult,
  type CompleteResult,
  type CompletionWrite,
  type Driver,
  type HeartbeatResult,
  type NewWork,
  type PoolConfig,
  type PoolCounts,
  type PoolStats,
  type Store,
  type TxOps,
  type WorkRow,
} from "../../driver/driver.js";
import { InvalidArgumentError } from "../../errors.js";
import { Mutex } from "../../driver/mutex.js";
import { TransactionScope } from "../../driver/transaction-scope.js";
import { checkTxConnection, checkTxOpen, isTransientSqliteError, mainFileOf } from "./connection-checks.js";
import { migrateSqlite } from "./migrate.js";
import { isTransactionExecutor, type TransactionExecutor } from "../../driver/tx-executor.js";
import { insertThroughExecutor } from "./tx-executor-insert.js";
import { insertParams, insertValues, toPoolConfig, toWorkRow, type SqlitePoolRow, type SqliteWorkRow } from "./rows.js";
import { statementsFor, type Statements } from "./statements.js";
import { SqliteAdminStatements } from "./admin.js";
import { claimRows } from "./claim.js";
import { completeRows } from "./complete.js";
import { SqliteTxOps } from "./tx-ops.js";
import { SqliteSchedules } from "./schedules.js";
import type { RateLimits, ScheduleAdvance, ScheduleRow, ScheduleWrite } from "../../driver/schedule-ops.js";

/**
 * Inserts `rows` with `stmts` inside the caller's transaction and returns the id each
 * stands for. A row with a unique key is an upsert on the unique index of pending keys,
 * under SQLite's write lock: its RETURNING gives the new row's id or the pending one's.
 */
function insertRows(stmts: Statements, rows: readonly NewWork[]): string[] {
  return rows.map((row) => {
    if (row.uniqueKey === null) {
      stmts.insertWorkRow.run(insertValues(row));
      return row.id;
    }
    const upsert = row.onConflict === "replace" ? stmts.insertUniqueReplace : stmts.insertUniqueKeep;
    return (upsert.get(insertParams(row)) as { id: string }).id;
  });
}

/** The SQLite implementation of the driver interface; also the Store users hold. */
export class SqliteDriver implements Driver<Database>, Store<Database> {
  readonly dialect = "sqlite";
  readonly synchronousTx = true;
  readonly [DRIVER]: Driver<Database> = this;
  private readonly lock = new Mutex();
  /**
   * The transaction the current async context runs in. Work a handler starts (a timer, a
   * wake-up) inherits the context but may outlive the transaction: `open` tells.
   */
  private readonly txContext = new TransactionScope<{ open: boolean }>();
  private readonly stmts: Statements;
  private readonly wakers = new Map<string, Set<() => void>>();
  private closed = false;
  /** The operations of this driver's transactions (there is one connection, so one set). */
  private readonly txOps: SqliteTxOps;
  private readonly admin: SqliteAdminStatements;
  private readonly schedules: SqliteSchedules;
  /** Runs a function in a transaction (a savepoint when one is open): made once, not per write. */
  private readonly inTransaction: Transaction<(fn: () => unknown) => unknown>;

  /**
   * @param db the connection (schema already migrated)
   * @param ownsDb whether close() should close it
   * @param pollIntervalMs how often workers look for work written by other processes
   */
  constructor(
    readonly db: Database,
    private readonly ownsDb: boolean,
    readonly pollIntervalMs: number,
  ) {
    this.stmts = statementsFor(db);
    this.txOps = new SqliteTxOps(db, this.stmts);
    this.admin = new SqliteAdminStatements(db);
    this.schedules = new SqliteSchedules(db);
    this.inTransaction = db.transaction((fn: () => unknown) => fn());
  }

  isTransientError(e: unknown): boolean {
    return isTransientSqliteError(e);
  }

  async migrate(): Promise<void> {
    // Already migrated when the store was created; inside a transaction there is nothing to do.
    if (this.insideTx) return;
    await this.lock.run(() => migrateSqlite(this.db));
  }

  async close(): Promise<void> {
    await this.lock.run(() => {
      if (this.closed) return;
      this.closed = true;
      if (this.ownsDb) this.db.close();
    });
  }

  /** Runs `fn` holding the connection: under the lock, or directly when already inside our transaction. */
  private get insideTx(): boolean {
    return this.txContext.current() !== null;
  }

  private exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.insideTx) return Promise.resolve().then(fn);
    return this.lock.run(fn);
  }

  /** Runs a short synchronous write transaction (a savepoint when nested in ours). */
  private write<T>(fn: () => T): Promise<T> {
    const tx = this.inTransaction;
    return this.exclusive(() => (this.db.inTransaction ? tx(fn) : tx.immediate(fn)) as T);
  }

  private read<T>(fn: () => T): Promise<T> {
    return this.exclusive(fn);
  }

  ensurePool(pool: string, seed: PoolConfig, overrides: Partial<PoolConfig>): Promise<PoolConfig> {
    return this.write(() => {
      this.stmts.seedPool.run(pool, seed.maxParallelism, seed.logLevel, seed.keyParallelism);
      if (overrides.maxParallelism !== undefined) this.stmts.setMaxParallelism.run({ n: overrides.maxParallelism, pool });
      if (overrides.logLevel !== undefined) this.stmts.setLogLevel.run(overrides.logLevel, pool);
      if (overrides.keyParallelism !== undefined) {
        this.stmts.setKeyParallelism.run(overrides.keyParallelism, pool);
        // Work parked at the old limit may have room under the new one: the claim walks it again.
        this.stmts.unparkAll.run(pool);
      }
      return toPoolConfig(this.stmts.readPool.get(pool) as SqlitePoolRow);
    });
  }

  readPoolConfig(pool: string): Promise<PoolConfig | null> {
    return this.read(() => {
      const row = this.stmts.readPool.get(pool) as SqlitePoolRow | undefined;
      return row ? toPoolConfig(row) : null;
    });
  }

  /**
   * With `tx`, writes synchronously on the caller's connection (inside whatever
   * transaction it has open) and throws synchronously; the returned promise is settled.
   * A transaction executor (an ORM's asynchronous transaction) is written through instead.
   */
  insertWork(rows: readonly NewWork[], tx?: Database | TransactionExecutor): Promise<string[]> {
    if (isTransactionExecutor(tx)) {
      if (this.closed) return Promise.reject(new Error("workpool: this SQLite store is closed"));
      const first = rows[0];
      const unique =
        first?.uniqueKey != null ? (first.onConflict === "replace" ? this.stmts.insertUniqueReplace : this.stmts.insertUniqueKeep) : null;
      return insertThroughExecutor(
        tx,
        rows,
        { insert: this.stmts.insertWork.source, unique: unique?.source ?? null },
        mainFileOf(this.db),
      ).then((ids) => (this.wakeSoon(rows), ids));
    }
    if (tx !== undefined) {
      checkTxConnection(tx);
      this.checkSameDatabase(tx);
      checkTxOpen(tx);
      const stmts = statementsFor(tx);
      // db.transaction nests as a savepoint when the caller already has one open.
      const ids = tx.transaction(() => insertRows(stmts, rows))();
      this.wakeSoon(rows);
      return Promise.resolve(ids);
    }
    // One plain row is one statement, atomic on its own: it commits without BEGIN and COMMIT around it.
    const single = rows.length === 1 && rows[0]!.uniqueKey === null;
    const written = single ? this.exclusive(() => insertRows(this.stmts, rows)) : this.write(() => insertRows(this.stmts, rows));
    return written.then((ids) => (this.wakeSoon(rows), ids));
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

  private wakeSoon(rows: readonly { pool: string }[]): void {
    const pools = new Set(rows.map((r) => r.pool));
    // After the caller's synchronous transaction has had the chance to commit.
    queueMicrotask(() => {
      for (const pool of pools) for (const wake of this.wakers.get(pool) ?? []) wake();
    });
  }

  claim(pool: string, opts: ClaimOptions): Promise<ClaimResult> {
    return this.write(() => claimRows(this.stmts, pool, opts));
  }

  /** One write transaction, no read-back: see complete.ts. */
  complete(pool: string, writes: readonly CompletionWrite[], now: number, claim: ClaimOptions | null): Promise<CompleteResult> {
    return this.write(() => completeRows(this.stmts, pool, writes, now, claim));
  }

  heartbeat(pool: string, workerId: string, refs: readonly AttemptRef[], leaseUntil: number): Promise<HeartbeatResult> {
    return this.write(() => {
      const rows = this.stmts.heartbeatRead.all(pool, JSON.stringify(refs.map((r) => r.id))) as Pick<
        SqliteWorkRow,
        "id" | "state" | "attempt" | "worker_id" | "cancel_requested"
      >[];
      const byId = new Map(rows.map((r) => [r.id, r]));
      const result: HeartbeatResult = { cancelRequested: [], lost: [] };
      for (const ref of refs) {
        const row = byId.get(ref.id);
        if (!row || row.state !== "running" || row.attempt !== ref.attempt || row.worker_id !== workerId) {
          result.lost.push(ref.id);
          continue;
        }
        this.stmts.extendLease.run(leaseUntil, ref.id, ref.attempt);
        if (row.cancel_requested) result.cancelRequested.push(ref.id);
      }
      return result;
    });
  }

  readWork(pool: string, ids: readonly string[]): Promise<WorkRow[]> {
    return this.read(() => (this.stmts.readWork.all(pool, JSON.stringify(ids)) as SqliteWorkRow[]).map(toWorkRow));
  }

  listCancelable(pool: string, before: number, limit: number, filter: CancelableFilter = {}): Promise<string[]> {
    return this.read(() => {
      const fn = filter.fnName ?? null;
      const key = filter.key ?? null;
      const pending = this.stmts.cancelablePending.all({ pool, before, limit, fn, key }) as { id: string }[];
      const rest = filter.pendingOnly ? 0 : Math.max(0, limit - pending.length);
      const running = rest ? (this.stmts.cancelableRunning.all({ pool, before, limit: rest, fn, key }) as { id: string }[]) : [];
      return [...pending, ...running].map((r) => r.id);
    });
  }

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

  acquireLeadership(pool: string, workerId: string, now: number, ttlMs: number): Promise<boolean> {
    return this.write(() => {
      const info = this.stmts.acquireLeader.run({ pool, worker: workerId, expires_at: now + ttlMs, now });
      return info.changes > 0;
    });
  }

  releaseLeadership(pool: string, workerId: string): Promise<void> {
    return this.write(() => {
      this.stmts.releaseLeader.run(pool, workerId);
    });
  }

  deleteFinishedBefore(pool: string, before: number, limit: number): Promise<number> {
    return this.write(() => this.stmts.deleteFinishedBefore.run(pool, before, limit).changes);
  }

  deleteFinishedIds(pool: string, ids: readonly string[]): Promise<string[]> {
    return this.write(() => (this.stmts.deleteFinishedIds.all(pool, JSON.stringify(ids)) as { id: string }[]).map((r) => r.id));
  }

  readStats(pool: string): Promise<PoolStats> {
    return this.read(
      () => (this.stmts.readStats.get(pool) as PoolStats | undefined) ?? { completed: 0, succeeded: 0, failed: 0, retries: 0, canceled: 0 },
    );
  }

  counts(pool: string, now: number): Promise<PoolCounts> {
    return this.read(() => {
      const p = this.stmts.countPending.get(now, pool) as { n: number; due: number };
      const r = this.stmts.countRunning.get(pool) as { n: number };
      return { pending: p.n, running: r.n, backlog: p.due };
    });
  }

  readPools(now: number, since: number): Promise<PoolRead[]> {
    return this.read(() => this.admin.readPools(now, since));
  }

  listWork(pool: string, query: WorkListQuery): Promise<WorkListRow[]> {
    return this.read(() => this.admin.listWork(pool, query));
  }

  readWorkDetail(id: string): Promise<WorkDetailRow | null> {
    return this.read(() => this.admin.readWorkDetail(id));
  }

  changePoolLimit(pool: string, change: PoolLimitChange): Promise<void> {
    // A raised limit or a resume frees slots: wake this process's workers of the pool.
    return this.write(() => this.admin.changePoolLimit(pool, change)).then(() => this.wakeSoon([{ pool }]));
  }

  schemaVersion(): Promise<number> {
    return this.read(() => this.admin.schemaVersion());
  }

  upsertSchedule(pool: string, write: ScheduleWrite): Promise<void> {
    return this.write(() => this.schedules.upsert(pool, write));
  }

  deleteSchedule(pool: string, id: string): Promise<boolean> {
    return this.write(() => this.schedules.delete(pool, id));
  }

  listSchedules(pool: string | null): Promise<ScheduleRow[]> {
    return this.read(() => this.schedules.list(pool));
  }

  dueSchedules(pool: string, now: number, limit: number): Promise<{ due: ScheduleRow[]; nextAt: number | null }> {
    return this.read(() => this.schedules.due(pool, now, limit));
  }

  async advanceSchedule(pool: string, step: ScheduleAdvance): Promise<boolean> {
    const applied = await this.write(() => this.schedules.advance(pool, step));
    if (applied && step.tick) this.wakeSoon([{ pool }]);
    return applied;
  }

  setRateLimits(pool: string, limits: Partial<RateLimits>): Promise<void> {
    // A removed or raised limit may let held work start: wake this process's workers.
    return this.write(() => this.schedules.setRateLimits(pool, limits)).then(() => this.wakeSoon([{ pool }]));
  }

  readRateLimits(pool: string): Promise<RateLimits> {
    return this.read(() => this.schedules.readRateLimits(pool));
  }

  countRateLimited(pool: string, now: number): Promise<number> {
    return this.read(() => this.schedules.countRateLimited(pool, now));
  }

  subscribe(pool: string, onWake: () => void): () => void {
    let set = this.wakers.get(pool);
    if (!set) this.wakers.set(pool, (set = new Set()));
    set.add(onWake);
    return () => set.delete(onWake);
  }
}
