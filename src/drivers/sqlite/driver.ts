/**
 * The SQLite driver: one better-sqlite3 connection, WAL, BEGIN IMMEDIATE transactions.
 *
 * Why it is shaped this way:
 * - better-sqlite3 is synchronous, so each statement is atomic with respect to the event
 *   loop. Only a transaction that awaits a user handler spans event-loop turns; a Mutex
 *   keeps every other use of the connection out until it ends (connection/).
 * - BEGIN IMMEDIATE takes SQLite's write lock at the start. That lock is the per-pool
 *   (in fact per-file) lock under which `claim` counts running work, so the global
 *   maxParallelism holds across every process sharing the file.
 * - Enqueue with `tx` runs synchronously on the caller's connection, so it works inside
 *   `db.transaction(() => ...)()` and rolls back with it.
 * - Calls made from inside a handler's transaction (a mutation calling `pool.status`, or
 *   `enqueue` without `tx`) already own the connection: they run inside that transaction
 *   instead of waiting for the lock, which would never be released (deadlock).
 *
 * The driver holds one object per noun of the interface (work.ts, pools.ts, schedules.ts,
 * admin.ts); NounDelegation hands the pool, schedule and admin calls to theirs.
 */
import { SqliteAttemptOutput } from "./attempt-output.js";
import { NounDelegation } from "../../driver/noun-delegation.js";
import type { Database } from "better-sqlite3";
import {
  DRIVER,
  type AttemptOutputRow,
  type AttemptOutputWrite,
  type AttemptRef,
  type CancelableFilter,
  type ClaimOptions,
  type ClaimResult,
  type CompleteResult,
  type CompletionWrite,
  type Driver,
  type HeartbeatResult,
  type LeaseRenewal,
  type NewWork,
  type Store,
  type TxOps,
  type WorkRow,
} from "../../driver/driver.js";
import { RunningWorkers } from "../../driver/running-workers.js";
import type { WorkflowOps } from "../../driver/workflow-ops.js";
import { SqliteWorkflows } from "./workflows.js";
import type { TransactionExecutor } from "../../driver/tx-executor.js";
import { SqliteAdmin } from "./admin.js";
import { SqliteRedrive } from "./redrive.js";
import { SqliteClaim } from "./claim.js";
import { SqliteConnectionAccess } from "./connection/connection-access.js";
import { isTransientSqliteError } from "./connection/connection-checks.js";
import { PoolWakeups } from "./connection/wakeups.js";
import { migrateSqlite } from "./migrate.js";
import { SqlitePools } from "./pools.js";
import { SqliteSchedules } from "./schedules.js";
import { SqliteTxOps } from "./tx-ops.js";
import { SqliteWork } from "./work.js";

/** The SQLite implementation of the driver interface; also the Store users hold. */
export class SqliteDriver extends NounDelegation implements Driver<Database>, Store<Database> {
  readonly dialect = "sqlite";
  readonly synchronousTx = true;
  /** One: every write takes SQLite's write lock, so a second batch in flight would only wait for it. */
  readonly completionLanes = 1;
  readonly [DRIVER]: Driver<Database> = this;
  readonly workers = new RunningWorkers();
  private closed = false;
  /** Who uses the connection when: the lock, our transactions, short reads and writes. */
  private readonly access: SqliteConnectionAccess;
  /** This process's workers to wake when work may be ready. */
  private readonly wakeups = new PoolWakeups();
  private readonly work: SqliteWork;
  protected readonly pools: SqlitePools;
  protected readonly schedules: SqliteSchedules;
  protected readonly admin: SqliteAdmin;
  private readonly output: SqliteAttemptOutput;
  protected readonly redrives: SqliteRedrive;
  private readonly flows: SqliteWorkflows;

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
    super();
    const claim = new SqliteClaim(db);
    this.access = new SqliteConnectionAccess(db, new SqliteTxOps(db, claim));
    this.work = new SqliteWork(db, this.access, this.wakeups, claim, () => this.closed);
    this.pools = new SqlitePools(db, this.access, this.wakeups);
    this.schedules = new SqliteSchedules(db, this.access, this.wakeups);
    this.admin = new SqliteAdmin(db, this.access, this.wakeups);
    this.redrives = new SqliteRedrive(db, this.access, this.wakeups);
    this.flows = new SqliteWorkflows(db, this.access);
    this.output = new SqliteAttemptOutput(db, this.access);
  }

  // The store as a whole.

  async close(): Promise<void> {
    await this.workers.stopAll();
    await this.access.locked(() => {
      if (this.closed) return;
      this.closed = true;
      if (this.ownsDb) this.db.close();
    });
  }

  isTransientError(e: unknown): boolean {
    return isTransientSqliteError(e);
  }

  async migrate(): Promise<void> {
    // Already migrated when the store was created; inside a transaction there is nothing to do.
    if (this.access.insideTx) return;
    await this.access.locked(() => migrateSqlite(this.db));
  }

  subscribe(pool: string, onWake: () => void): () => void {
    return this.wakeups.subscribe(pool, onWake);
  }

  // WorkOps (work.ts).

  claim(pool: string, opts: ClaimOptions): Promise<ClaimResult> {
    return this.work.claim(pool, opts);
  }

  complete(pool: string, writes: readonly CompletionWrite[], now: number, claim: ClaimOptions | null): Promise<CompleteResult> {
    return this.work.complete(pool, writes, now, claim);
  }

  deleteFinishedBefore(pool: string, before: number, limit: number): Promise<number> {
    return this.work.deleteFinishedBefore(pool, before, limit);
  }

  deleteFinishedIds(pool: string, ids: readonly string[]): Promise<string[]> {
    return this.work.deleteFinishedIds(pool, ids);
  }

  heartbeat(pool: string, workerId: string, refs: readonly AttemptRef[], lease: LeaseRenewal): Promise<HeartbeatResult> {
    return this.work.heartbeat(pool, workerId, refs, lease);
  }

  insertWork(rows: readonly NewWork[], tx?: Database | TransactionExecutor): Promise<string[]> {
    return this.work.insertWork(rows, tx);
  }

  listCancelable(pool: string, before: number, limit: number, filter?: CancelableFilter): Promise<string[]> {
    return this.work.listCancelable(pool, before, limit, filter);
  }

  readWork(pool: string, ids: readonly string[]): Promise<WorkRow[]> {
    return this.work.readWork(pool, ids);
  }

  transaction<T>(fn: (ops: TxOps<Database>) => Promise<T>): Promise<T> {
    return this.work.transaction(fn);
  }

  // Attempt output (attempt-output.ts).

  writeAttemptOutput(pool: string, workerId: string, writes: readonly AttemptOutputWrite[], now: number): Promise<AttemptRef[]> {
    return this.output.writeAttemptOutput(pool, workerId, writes, now);
  }

  readAttemptOutput(ids: readonly string[]): Promise<AttemptOutputRow[]> {
    return this.output.readAttemptOutput(ids);
  }

  readWorkWithProgress(pool: string, ids: readonly string[]): Promise<{ row: WorkRow; progress: string | null }[]> {
    return this.output.readWorkWithProgress(pool, ids);
  }

  // Workflows.

  workflows(tx?: Database): WorkflowOps {
    return this.flows.workflows(tx);
  }
}
