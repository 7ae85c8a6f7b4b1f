/**
 * The PostgreSQL driver: a pg.Pool for statements and transactions, plus one LISTEN
 * connection for wake-ups.
 *
 * Why it is shaped this way:
 * - The global maxParallelism is enforced in `claim`, a function in the schema run in one
 *   transaction: it locks the pool's row (FOR UPDATE), so claims of one pool run one at a
 *   time across every process, then counts running work and takes at most the free
 *   slots with FOR UPDATE SKIP LOCKED.
 * - Everything that can be one statement is one statement in autocommit (claim, enqueue,
 *   heartbeat, leadership, reads); batches are arrays, never one statement per row.
 * - Transactions that await handlers hold their own client; the rest of the driver keeps
 *   working on other connections of the pool meanwhile.
 * - Calls a handler makes to the pool from inside its transaction (a mutation calling
 *   `pool.status`, `pool.cancel`, enqueue without `tx`) run on that transaction's client,
 *   as the SQLite store does: they see and join the handler's writes, and cannot wait on
 *   the handler's own row locks (which would never be released) or on a free connection.
 * - Connection faults surface as rejected promises. The core retries claims, result
 *   writes and heartbeats with backoff; the pool replaces dead connections; the
 *   listener reconnects by itself.
 */
import type { Client, Pool, PoolClient } from "pg";
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
import type { TransactionExecutor } from "../../driver/tx-executor.js";
import { run, type Queryable } from "./connection.js";
import { Listener } from "./listener.js";
import { Notifier } from "./notifier.js";
import { PinnedConnection } from "./pinned.js";
import { channelName, quoteIdent } from "./names.js";
import { ClaimKeys, claimOn } from "./claim.js";
import { completeOn } from "./complete.js";
import { toPoolStats, toWorkRow, type PgStatsRow, type PgWorkRow } from "./rows.js";
import { ensurePoolOn, readPoolConfigOn } from "./pool-config.js";
import { heartbeatOn } from "./heartbeat.js";
import { statementsFor, type Statements } from "./statements.js";
import { TxChecker } from "./tx-check.js";
import { isTransientPgError } from "./errors.js";
import { Vacuumer, type VacuumSettings } from "./vacuum.js";
import { PgActivity } from "./activity.js";
import { PgAdmin } from "./admin.js";
import { PgSchedules } from "./schedules.js";
import { PgStoreLifecycle } from "./lifecycle.js";
import { PgTransactions } from "./transactions.js";
import { PgWorkInserter } from "./insert.js";
import { RunningWorkers } from "../../driver/running-workers.js";
import type { WorkflowOps } from "../../driver/workflow-ops.js";
import { pgWorkflowOps } from "./workflows.js";
import type { RateLimits, ScheduleAdvance, ScheduleRow, ScheduleWrite } from "../../driver/schedule-ops.js";

/** What the driver needs to run. */
export interface PostgresDriverConfig {
  /** The connection pool for statements and transactions. */
  pool: Pool;
  /** Whether close() ends `pool` (true when the store created it). */
  ownsPool: boolean;
  /** Makes an unconnected client with the pool's settings, for LISTEN. */
  newListenClient: () => Client;
  /** Schema holding the tables (already validated). */
  schema: string;
  /** Safety-poll interval, ms. */
  pollIntervalMs: number;
  /** When the maintenance leader vacuums the work table; null: never. */
  vacuum: VacuumSettings | null;
  /** The connect timeout the store set on its connections, ms; null when the given pool has its own. */
  connectTimeoutMs: number | null;
}

/** The PostgreSQL implementation of the driver interface; also the Store users hold. */
export class PostgresDriver implements Driver<PoolClient>, Store<PoolClient> {
  readonly dialect = "postgres";
  readonly synchronousTx = false;
  readonly [DRIVER]: Driver<PoolClient> = this;
  /** The pool the store runs on. */
  readonly pool: Pool;
  /** Schema holding the store's tables. */
  readonly schema: string;
  readonly pollIntervalMs: number;
  /** Two completion batches in flight: see Driver.completionLanes. */
  readonly completionLanes = 2;
  readonly workers = new RunningWorkers();
  /** The LISTEN side of the store (exposed for diagnostics and tests). */
  readonly listener: Listener;
  /** The NOTIFY side: coalesces the wake-ups of back-to-back enqueues. */
  readonly notifier: Notifier;
  private readonly stmts: Statements;
  private readonly channel: string;
  /** Where this process's next claim of each pool starts its walk of the pending index. */
  private readonly claimKeys = new ClaimKeys();
  private readonly vacuumer: Vacuumer | null;
  private readonly admin: PgAdmin;
  private readonly activity: PgActivity;
  private readonly schedules: PgSchedules;
  /** Migrate and close, and the connections statements run on while the store is open. */
  private readonly lifecycle: PgStoreLifecycle;
  /** Our transactions, and which one the calling code runs inside. */
  private readonly transactions: PgTransactions;
  /** The enqueue paths. */
  private readonly inserter: PgWorkInserter;

  constructor(config: PostgresDriverConfig) {
    this.pool = config.pool;
    const pinned = new PinnedConnection(config.pool);
    this.schema = config.schema;
    this.pollIntervalMs = config.pollIntervalMs;
    this.vacuumer = config.vacuum ? new Vacuumer(`${quoteIdent(config.schema)}.work`, config.vacuum) : null;
    this.stmts = statementsFor(config.schema);
    this.channel = channelName(config.schema);
    this.listener = new Listener(config.newListenClient, this.channel);
    const txChecker = new TxChecker(config.pool);
    this.admin = new PgAdmin(config.schema, this.channel);
    this.activity = new PgActivity(config.schema);
    this.schedules = new PgSchedules(config.schema, this.channel);
    this.notifier = new Notifier(
      async (pool) => {
        await run(this.pool, this.stmts.notify, [this.channel, pool]);
      },
      (pool) => this.listener.wakeLocal(pool),
    );
    this.lifecycle = new PgStoreLifecycle({ ...config, pinned, listener: this.listener, notifier: this.notifier, workers: this.workers });
    this.transactions = new PgTransactions(this.stmts, this.channel, this.claimKeys);
    this.inserter = new PgWorkInserter(this.stmts, this.channel, this.notifier, txChecker, this.lifecycle, this.transactions);
  }

  isTransientError(e: unknown): boolean {
    return isTransientPgError(e);
  }

  /** Creates or upgrades the schema. Runs once per store; a failed run is retried on the next call. */
  migrate(): Promise<void> {
    return this.lifecycle.migrate();
  }

  /** Closes the LISTEN connection and, if the store created it, the pool. Idempotent. */
  close(): Promise<void> {
    return this.lifecycle.close();
  }

  /** Where autocommit statements run, once the store is known to be open: the held client or the pool. */
  private get db(): Queryable {
    return this.lifecycle.db;
  }

  /** The pool itself, once the store is known to be open: for transactions and VACUUM. */
  private get openPool(): Pool {
    return this.lifecycle.openPool;
  }

  /** Where a call made on behalf of the application runs: inside the handler's transaction, or on the pool. */
  private get app(): Queryable {
    return this.transactions.joinedClient() ?? this.db;
  }

  ensurePool(pool: string, seed: PoolConfig, overrides: Partial<PoolConfig>): Promise<PoolConfig> {
    return ensurePoolOn(() => this.app, this.stmts, this.channel, pool, seed, overrides);
  }

  async readPoolConfig(pool: string): Promise<PoolConfig | null> {
    return readPoolConfigOn(this.app, this.stmts, pool);
  }

  /** See insert.ts: one statement per batch, in `tx`, in the handler's transaction, or in autocommit. */
  insertWork(rows: readonly NewWork[], tx?: PoolClient | TransactionExecutor): Promise<string[]> {
    return this.inserter.insertWork(rows, tx);
  }

  /** One statement in autocommit: see enqueue_claim() in schema.sql. */
  insertAndClaim(row: NewWork, claim: ClaimOptions): Promise<WorkRow | null> {
    return this.inserter.insertAndClaim(row, claim);
  }

  /** One statement in autocommit: see claim() in schema.sql. */
  async claim(pool: string, opts: ClaimOptions): Promise<ClaimResult> {
    return claimOn(this.db, this.stmts, this.claimKeys, pool, opts);
  }

  /** One statement in autocommit: see complete() in schema.sql. */
  async complete(pool: string, writes: readonly CompletionWrite[], now: number, claim: ClaimOptions | null): Promise<CompleteResult> {
    return completeOn(this.db, this.stmts, this.claimKeys, this.channel, pool, writes, now, claim);
  }

  async heartbeat(pool: string, workerId: string, refs: readonly AttemptRef[], lease: LeaseRenewal): Promise<HeartbeatResult> {
    if (!refs.length) return { cancelRequested: [], lost: [] };
    return heartbeatOn(this.db, this.stmts, pool, workerId, refs, lease);
  }

  workflows(tx?: PoolClient): WorkflowOps {
    return pgWorkflowOps(tx ?? this.app, this.schema);
  }

  async readWork(pool: string, ids: readonly string[]): Promise<WorkRow[]> {
    if (!ids.length) return [];
    return (await run<PgWorkRow>(this.app, this.stmts.readWork, [pool, ids])).rows.map(toWorkRow);
  }

  async listCancelable(pool: string, before: number, limit: number, filter: CancelableFilter = {}): Promise<string[]> {
    const params = [pool, before, limit, filter.fnName ?? null, filter.pendingOnly ?? false, filter.key ?? null];
    return (await run<{ id: string }>(this.app, this.stmts.listCancelable, params)).rows.map((r) => r.id);
  }

  readPools(now: number, since: number): Promise<PoolRead[]> {
    return this.admin.readPools(this.openPool, now, since);
  }

  readActivity(pools: readonly string[], from: number, to: number, bucketMs: number): Promise<ActivityRead[]> {
    return this.activity.read(this.openPool, pools, from, to, bucketMs);
  }

  listWork(pool: string, query: WorkListQuery): Promise<WorkListRow[]> {
    return this.admin.listWork(this.app, pool, query);
  }

  readWorkDetail(id: string): Promise<WorkDetailRow | null> {
    return this.admin.readWorkDetail(this.app, id);
  }

  retryWork(id: string, work: NewWork): Promise<boolean> {
    return this.admin.retryWork(this.app, id, work);
  }

  changePoolLimit(pool: string, change: PoolLimitChange): Promise<void> {
    return this.admin.changePoolLimit(this.app, pool, change);
  }

  schemaVersion(): Promise<number> {
    return this.admin.schemaVersion(this.db);
  }

  /** BEGIN ... COMMIT on a client of the pool; nested in one of ours (cancel() from a mutation), a savepoint. */
  transaction<T>(fn: (ops: TxOps<PoolClient>) => Promise<T>): Promise<T> {
    return this.transactions.run(() => this.openPool, fn);
  }

  /** See vacuum.ts: VACUUM of the work table once its dead rows pass the threshold. */
  async vacuum(now: number): Promise<boolean> {
    return this.vacuumer ? this.vacuumer.maybeVacuum(this.openPool, now) : false;
  }

  async acquireLeadership(pool: string, workerId: string, now: number, ttlMs: number): Promise<boolean> {
    const { rowCount } = await run(this.db, this.stmts.acquireLeader, [pool, workerId, now + ttlMs, now]);
    return rowCount > 0;
  }

  async releaseLeadership(pool: string, workerId: string): Promise<void> {
    await run(this.db, this.stmts.releaseLeader, [pool, workerId]);
  }

  async deleteFinishedBefore(pool: string, before: number, limit: number): Promise<number> {
    return (await run(this.db, this.stmts.deleteFinishedBefore, [pool, before, limit])).rowCount;
  }

  async deleteFinishedIds(pool: string, ids: readonly string[]): Promise<string[]> {
    if (!ids.length) return [];
    return (await run<{ id: string }>(this.app, this.stmts.deleteFinishedIds, [pool, ids])).rows.map((r) => r.id);
  }

  async readStats(pool: string): Promise<PoolStats> {
    return toPoolStats((await run<PgStatsRow>(this.app, this.stmts.readStats, [pool])).rows[0]);
  }

  async counts(pool: string, now: number): Promise<PoolCounts> {
    const row = (await run<{ pending: number; due: number; running: number }>(this.app, this.stmts.counts, [pool, now])).rows[0]!;
    return { pending: row.pending, running: row.running, backlog: row.due };
  }

  upsertSchedule(pool: string, write: ScheduleWrite): Promise<void> {
    return this.schedules.upsert(this.app, pool, write);
  }

  deleteSchedule(pool: string, id: string): Promise<boolean> {
    return this.schedules.delete(this.app, pool, id);
  }

  listSchedules(pool: string | null): Promise<ScheduleRow[]> {
    return this.schedules.list(this.app, pool);
  }

  dueSchedules(pool: string, now: number, limit: number): Promise<{ due: ScheduleRow[]; nextAt: number | null }> {
    return this.schedules.due(this.db, pool, now, limit);
  }

  /** One statement in autocommit: the compare-and-set, the insert and its NOTIFY. */
  advanceSchedule(pool: string, step: ScheduleAdvance): Promise<boolean> {
    return this.schedules.advance(this.db, pool, step);
  }

  async setRateLimits(pool: string, limits: Partial<RateLimits>): Promise<void> {
    await this.schedules.setRateLimits(this.app, pool, limits);
    // A removed or raised limit may let held work start, in any process.
    await run(this.app, this.stmts.notify, [this.channel, pool]);
  }

  readRateLimits(pool: string): Promise<RateLimits> {
    return this.schedules.readRateLimits(this.app, pool);
  }

  countRateLimited(pool: string, now: number): Promise<number> {
    return this.schedules.countRateLimited(this.app, pool, now);
  }

  subscribe(pool: string, onWake: () => void): () => void {
    if (this.lifecycle.closed) return () => undefined;
    return this.listener.subscribe(pool, onWake);
  }
}
