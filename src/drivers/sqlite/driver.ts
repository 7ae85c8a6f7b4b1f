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
import type { Database } from "better-sqlite3";
import type { CancelableFilter, PoolLimitChange, PoolRead, WorkDetailRow, WorkListQuery, WorkListRow } from "../../driver/admin-ops.js";
import type { ActivityRead } from "../../driver/admin-ops.js";
import {
  DRIVER,
  type AttemptRef,
  type ClaimOptions,
  type ClaimResult,
  type CompleteResult,
  type CompletionWrite,
  type Driver,
  type HeartbeatResult,
  type LeaseRenewal,
  type NewWork,
  type PoolConfig,
  type PoolCounts,
  type PoolStats,
  type Store,
  type TxOps,
  type WorkRow,
} from "../../driver/driver.js";
import { isTransientSqliteError } from "./connection-checks.js";
import { migrateSqlite } from "./migrate.js";
import type { TransactionExecutor } from "../../driver/tx-executor.js";
import { toPoolConfig, toWorkRow, type SqlitePoolRow, type SqliteWorkRow } from "./rows.js";
import { statementsFor, type Statements } from "./statements.js";
import { SqliteActivity } from "./activity.js";
import { SqliteAdminStatements } from "./admin.js";
import { claimRows } from "./claim.js";
import { completeRows } from "./complete.js";
import { SqliteTxOps } from "./tx-ops.js";
import { SqliteSchedules } from "./schedules.js";
import { SqliteConnectionAccess } from "./connection-access.js";
import { SqliteWorkInserter } from "./insert.js";
import { PoolWakeups } from "./wakeups.js";
import { RunningWorkers } from "../../driver/running-workers.js";
import type { WorkflowOps } from "../../driver/workflow-ops.js";
import { sqliteWorkflowOps } from "./workflows.js";
import type { RateLimits, ScheduleAdvance, ScheduleRow, ScheduleWrite } from "../../driver/schedule-ops.js";

/** The SQLite implementation of the driver interface; also the Store users hold. */
export class SqliteDriver implements Driver<Database>, Store<Database> {
  readonly dialect = "sqlite";
  readonly synchronousTx = true;
  readonly [DRIVER]: Driver<Database> = this;
  readonly workers = new RunningWorkers();
  private readonly stmts: Statements;
  private closed = false;
  private readonly admin: SqliteAdminStatements;
  private readonly activity: SqliteActivity;
  private readonly schedules: SqliteSchedules;
  /** Who uses the connection when: the lock, our transactions, short reads and writes. */
  private readonly access: SqliteConnectionAccess;
  /** This process's workers to wake when work may be ready. */
  private readonly wakeups = new PoolWakeups();
  /** The enqueue paths. */
  private readonly inserter: SqliteWorkInserter;

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
    const txOps = new SqliteTxOps(db, this.stmts);
    this.admin = new SqliteAdminStatements(db);
    this.activity = new SqliteActivity(db);
    this.schedules = new SqliteSchedules(db);
    this.access = new SqliteConnectionAccess(db, txOps);
    this.inserter = new SqliteWorkInserter(db, this.stmts, this.access, this.wakeups, () => this.closed);
  }

  isTransientError(e: unknown): boolean {
    return isTransientSqliteError(e);
  }

  async migrate(): Promise<void> {
    // Already migrated when the store was created; inside a transaction there is nothing to do.
    if (this.access.insideTx) return;
    await this.access.locked(() => migrateSqlite(this.db));
  }

  async close(): Promise<void> {
    await this.workers.stopAll();
    await this.access.locked(() => {
      if (this.closed) return;
      this.closed = true;
      if (this.ownsDb) this.db.close();
    });
  }

  ensurePool(pool: string, seed: PoolConfig, overrides: Partial<PoolConfig>): Promise<PoolConfig> {
    return this.access.write(() => {
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
    return this.access.read(() => {
      const row = this.stmts.readPool.get(pool) as SqlitePoolRow | undefined;
      return row ? toPoolConfig(row) : null;
    });
  }

  /** See insert.ts: on the store's connection, synchronously in the caller's `tx`, or through a transaction executor. */
  insertWork(rows: readonly NewWork[], tx?: Database | TransactionExecutor): Promise<string[]> {
    return this.inserter.insertWork(rows, tx);
  }

  claim(pool: string, opts: ClaimOptions): Promise<ClaimResult> {
    return this.access.write(() => claimRows(this.stmts, pool, opts));
  }

  /** One write transaction, no read-back: see complete.ts. */
  complete(pool: string, writes: readonly CompletionWrite[], now: number, claim: ClaimOptions | null): Promise<CompleteResult> {
    return this.access.write(() => completeRows(this.stmts, pool, writes, now, claim));
  }

  heartbeat(pool: string, workerId: string, refs: readonly AttemptRef[], lease: LeaseRenewal): Promise<HeartbeatResult> {
    return this.access.write(() => {
      const leaseUntil = lease.clock() + lease.leaseMs;
      const rows = this.stmts.heartbeatRead.all(pool, JSON.stringify(refs.map((r) => r.id))) as Pick<
        SqliteWorkRow,
        "id" | "state" | "attempt" | "worker_id" | "cancel_requested"
      >[];
      const byId = new Map(rows.map((r) => [r.id, r]));
      const result: HeartbeatResult = { cancelRequested: [], lost: [] };
      for (const ref of refs) {
        const row = byId.get(ref.id);
        if (!row || row.state !== "running" || row.attempt !== ref.attempt || row.worker_id !== workerId) {
          result.lost.push(ref);
          continue;
        }
        this.stmts.extendLease.run(leaseUntil, ref.id, ref.attempt);
        if (row.cancel_requested) result.cancelRequested.push(ref);
      }
      return result;
    });
  }

  workflows(tx?: Database): WorkflowOps {
    if (tx !== undefined || this.access.insideTx) return sqliteWorkflowOps(tx ?? this.db);
    // Outside a transaction: each call holds the connection, in its own write transaction.
    const raw = sqliteWorkflowOps(this.db);
    const held = {} as Record<string, unknown>;
    for (const [name, fn] of Object.entries(raw) as [string, (...a: unknown[]) => unknown][]) {
      held[name] = (...args: unknown[]) => this.access.write(() => fn(...args));
    }
    return held as unknown as WorkflowOps;
  }

  readWork(pool: string, ids: readonly string[]): Promise<WorkRow[]> {
    return this.access.read(() => (this.stmts.readWork.all(pool, JSON.stringify(ids)) as SqliteWorkRow[]).map(toWorkRow));
  }

  listCancelable(pool: string, before: number, limit: number, filter: CancelableFilter = {}): Promise<string[]> {
    return this.access.read(() => {
      const fn = filter.fnName ?? null;
      const key = filter.key ?? null;
      const pending = this.stmts.cancelablePending.all({ pool, before, limit, fn, key }) as { id: string }[];
      const rest = filter.pendingOnly ? 0 : Math.max(0, limit - pending.length);
      const running = rest ? (this.stmts.cancelableRunning.all({ pool, before, limit: rest, fn, key }) as { id: string }[]) : [];
      return [...pending, ...running].map((r) => r.id);
    });
  }

  /** BEGIN IMMEDIATE ... COMMIT under the connection's lock; nested in one of ours, a savepoint. */
  transaction<T>(fn: (ops: TxOps<Database>) => Promise<T>): Promise<T> {
    return this.access.transaction(fn);
  }

  acquireLeadership(pool: string, workerId: string, now: number, ttlMs: number): Promise<boolean> {
    return this.access.write(() => {
      const info = this.stmts.acquireLeader.run({ pool, worker: workerId, expires_at: now + ttlMs, now });
      return info.changes > 0;
    });
  }

  releaseLeadership(pool: string, workerId: string): Promise<void> {
    return this.access.write(() => {
      this.stmts.releaseLeader.run(pool, workerId);
    });
  }

  deleteFinishedBefore(pool: string, before: number, limit: number): Promise<number> {
    return this.access.write(() => this.stmts.deleteFinishedBefore.run(pool, before, limit).changes);
  }

  deleteFinishedIds(pool: string, ids: readonly string[]): Promise<string[]> {
    return this.access.write(() => (this.stmts.deleteFinishedIds.all(pool, JSON.stringify(ids)) as { id: string }[]).map((r) => r.id));
  }

  readStats(pool: string): Promise<PoolStats> {
    return this.access.read(
      () => (this.stmts.readStats.get(pool) as PoolStats | undefined) ?? { completed: 0, succeeded: 0, failed: 0, retries: 0, canceled: 0 },
    );
  }

  counts(pool: string, now: number): Promise<PoolCounts> {
    return this.access.read(() => {
      const p = this.stmts.countPending.get(now, pool) as { n: number; due: number };
      const r = this.stmts.countRunning.get(pool) as { n: number };
      return { pending: p.n, running: r.n, backlog: p.due };
    });
  }

  readPools(now: number, since: number): Promise<PoolRead[]> {
    return this.access.read(() => this.admin.readPools(now, since));
  }

  readActivity(pools: readonly string[], from: number, to: number, bucketMs: number): Promise<ActivityRead[]> {
    return this.access.read(() => this.activity.read(pools, from, to, bucketMs));
  }

  listWork(pool: string, query: WorkListQuery): Promise<WorkListRow[]> {
    return this.access.read(() => this.admin.listWork(pool, query));
  }

  readWorkDetail(id: string): Promise<WorkDetailRow | null> {
    return this.access.read(() => this.admin.readWorkDetail(id));
  }

  async retryWork(id: string, work: NewWork): Promise<boolean> {
    const inserted = await this.access.write(() => this.admin.retryWork(id, work));
    if (inserted) this.wakeups.wakeSoon([work]);
    return inserted;
  }

  changePoolLimit(pool: string, change: PoolLimitChange): Promise<void> {
    // A raised limit or a resume frees slots: wake this process's workers of the pool.
    return this.access.write(() => this.admin.changePoolLimit(pool, change)).then(() => this.wakeups.wakeSoon([{ pool }]));
  }

  schemaVersion(): Promise<number> {
    return this.access.read(() => this.admin.schemaVersion());
  }

  upsertSchedule(pool: string, write: ScheduleWrite): Promise<void> {
    return this.access.write(() => this.schedules.upsert(pool, write));
  }

  deleteSchedule(pool: string, id: string): Promise<boolean> {
    return this.access.write(() => this.schedules.delete(pool, id));
  }

  listSchedules(pool: string | null): Promise<ScheduleRow[]> {
    return this.access.read(() => this.schedules.list(pool));
  }

  dueSchedules(pool: string, now: number, limit: number): Promise<{ due: ScheduleRow[]; nextAt: number | null }> {
    return this.access.read(() => this.schedules.due(pool, now, limit));
  }

  async advanceSchedule(pool: string, step: ScheduleAdvance): Promise<boolean> {
    const applied = await this.access.write(() => this.schedules.advance(pool, step));
    if (applied && step.tick) this.wakeups.wakeSoon([{ pool }]);
    return applied;
  }

  setRateLimits(pool: string, limits: Partial<RateLimits>): Promise<void> {
    // A removed or raised limit may let held work start: wake this process's workers.
    return this.access.write(() => this.schedules.setRateLimits(pool, limits)).then(() => this.wakeups.wakeSoon([{ pool }]));
  }

  readRateLimits(pool: string): Promise<RateLimits> {
    return this.access.read(() => this.schedules.readRateLimits(pool));
  }

  countRateLimited(pool: string, now: number): Promise<number> {
    return this.access.read(() => this.schedules.countRateLimited(pool, now));
  }

  subscribe(pool: string, onWake: () => void): () => void {
    return this.wakeups.subscribe(pool, onWake);
  }
}
