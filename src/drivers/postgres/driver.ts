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
import { Mutex } from "../../driver/mutex.js";
import { TransactionScope } from "../../driver/transaction-scope.js";
import type { TransactionExecutor } from "../../driver/tx-executor.js";
import { inTransaction, run, type Queryable } from "./connection.js";
import { Listener } from "./listener.js";
import { Notifier } from "./notifier.js";
import { PinnedConnection } from "./pinned.js";
import { migratePostgres } from "./migrate.js";
import { channelName, quoteIdent } from "./names.js";
import { ClaimKeys, claimOn } from "./claim.js";
import { completeOn } from "./complete.js";
import { claimedRow, insertParams, toPoolConfig, toPoolStats, toWorkRow, type PgPoolRow, type PgStatsRow, type PgWorkRow } from "./rows.js";
import { insertStatements, statementsFor, type Statements } from "./statements.js";
import { PgTxOps } from "./tx-ops.js";
import { TxChecker } from "./tx-check.js";
import { closedError, connectError, isTransientPgError } from "./errors.js";
import { Vacuumer, type VacuumSettings } from "./vacuum.js";
import { PgAdmin } from "./admin.js";
import { PgSchedules } from "./schedules.js";
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

/** One of our open transactions, as seen by code running inside it. */
interface OpenTx {
  ops: PgTxOps;
  /** False once the transaction's function settled: later calls must not join it. */
  open: boolean;
  /** Nested transactions (savepoints) on one client take turns. */
  nested: Mutex;
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
  /** The LISTEN side of the store (exposed for diagnostics and tests). */
  readonly listener: Listener;
  /** The NOTIFY side: coalesces the wake-ups of back-to-back enqueues. */
  readonly notifier: Notifier;
  private readonly ownsPool: boolean;
  /** The client held for autocommit statements issued back to back (see pinned.ts). */
  private readonly pinned: PinnedConnection;
  private readonly stmts: Statements;
  private readonly channel: string;
  /** Where this process's next claim of each pool starts its walk of the pending index. */
  private readonly claimKeys = new ClaimKeys();
  private migrated: Promise<void> | null = null;
  private readonly vacuumer: Vacuumer | null;
  /** The transaction the current async context runs in, if any. */
  private readonly inside = new TransactionScope<OpenTx>();
  private closing: Promise<void> | null = null;
  /** Checks the `tx` of enqueues. */
  private readonly txChecker: TxChecker;
  private readonly connectTimeoutMs: number | null;
  private readonly admin: PgAdmin;
  private readonly schedules: PgSchedules;

  constructor(config: PostgresDriverConfig) {
    this.pool = config.pool;
    this.ownsPool = config.ownsPool;
    this.pinned = new PinnedConnection(config.pool);
    this.schema = config.schema;
    this.pollIntervalMs = config.pollIntervalMs;
    this.vacuumer = config.vacuum ? new Vacuumer(`${quoteIdent(config.schema)}.work`, config.vacuum) : null;
    this.stmts = statementsFor(config.schema);
    this.channel = channelName(config.schema);
    this.listener = new Listener(config.newListenClient, this.channel);
    this.txChecker = new TxChecker(config.pool);
    this.connectTimeoutMs = config.connectTimeoutMs;
    this.admin = new PgAdmin(config.schema, this.channel);
    this.schedules = new PgSchedules(config.schema, this.channel);
    this.notifier = new Notifier(
      async (pool) => {
        await run(this.pool, this.stmts.notify, [this.channel, pool]);
      },
      (pool) => this.listener.wakeLocal(pool),
    );
  }

  isTransientError(e: unknown): boolean {
    return isTransientPgError(e);
  }

  /** Creates or upgrades the schema. Runs once per store; a failed run is retried on the next call. */
  migrate(): Promise<void> {
    if (this.closing) return Promise.reject(closedError());
    this.migrated ??= migratePostgres(this.pool, this.schema).catch((e: unknown) => {
      this.migrated = null;
      throw this.isTransientError(e) ? connectError(e, this.connectTimeoutMs) : e;
    });
    return this.migrated;
  }

  /** Closes the LISTEN connection and, if the store created it, the pool. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.notifier.close();
      this.pinned.close();
      await this.listener.close();
      if (this.ownsPool) await this.pool.end();
    })();
    return this.closing;
  }

  private checkOpen(): void {
    if (this.closing) throw closedError();
  }

  /** Where autocommit statements run, once the store is known to be open: the held client or the pool. */
  private get db(): Queryable {
    this.checkOpen();
    return this.pinned;
  }

  /** The pool itself, once the store is known to be open: for transactions and VACUUM. */
  private get openPool(): Pool {
    this.checkOpen();
    this.pinned.makeRoom();
    return this.pool;
  }

  /** Our transaction the caller runs inside (a handler calling the pool), if still open. */
  private joined(): OpenTx | null {
    return this.inside.current();
  }

  /** Where a call made on behalf of the application runs: inside the handler's transaction, or on the pool. */
  private get app(): Queryable {
    return this.joined()?.ops.tx ?? this.db;
  }

  async ensurePool(pool: string, seed: PoolConfig, overrides: Partial<PoolConfig>): Promise<PoolConfig> {
    const { rows } = await run<PgPoolRow>(this.app, this.stmts.upsertPool, [
      pool,
      seed.maxParallelism,
      seed.logLevel,
      overrides.maxParallelism ?? null,
      overrides.logLevel ?? null,
      seed.keyParallelism,
      overrides.keyParallelism !== undefined,
      overrides.keyParallelism ?? null,
    ]);
    // Work parked at the old per-key limit may have room under the new one. After the pool
    // row's update, which waited for every claim that read the old limit to commit.
    if (overrides.keyParallelism !== undefined) await run(this.app, this.stmts.unparkAll, [pool]);
    // A changed limit concerns workers in every process (a raised one frees slots).
    if (overrides.maxParallelism !== undefined || overrides.logLevel !== undefined || overrides.keyParallelism !== undefined) {
      await run(this.app, this.stmts.notify, [this.channel, pool]);
    }
    return toPoolConfig(rows[0]!);
  }

  async readPoolConfig(pool: string): Promise<PoolConfig | null> {
    const { rows } = await run<PgPoolRow>(this.app, this.stmts.readPool, [pool]);
    return rows[0] ? toPoolConfig(rows[0]) : null;
  }

  /**
   * One statement for the whole batch. Without `tx` it commits on its own (autocommit)
   * and its wake-up may be coalesced with other enqueues' (see Notifier); with `tx` it
   * runs on the caller's client inside their transaction, and the work and its
   * notification exist only if they commit.
   */
  async insertWork(rows: readonly NewWork[], tx?: PoolClient | TransactionExecutor): Promise<string[]> {
    if (!rows.length) return [];
    if (rows[0]!.uniqueKey !== null) return [await this.insertUnique(rows, tx)];
    const { form, params } = insertParams(rows);
    const { notifying, quiet } = insertStatements(this.stmts, form);
    const ids = rows.map((r) => r.id);
    if (tx !== undefined) {
      this.checkOpen();
      await run(await this.txChecker.check(tx), notifying, [...params, this.channel]);
      return ids;
    }
    const joined = this.joined();
    // Inside a handler's transaction: it commits later, with the handler's writes.
    if (joined) {
      await run(joined.ops.tx, notifying, [...params, this.channel]);
      return ids;
    }
    // Every row of one enqueue belongs to one pool.
    const pool = rows[0]!.pool;
    const inlineSince = this.notifier.notifyInline(pool);
    if (inlineSince !== null) {
      try {
        await run(this.db, notifying, [...params, this.channel]);
      } catch (e) {
        this.notifier.failedInline(pool);
        throw e;
      }
      this.notifier.committedInline(pool, inlineSince);
    } else {
      await run(this.db, quiet, params);
      this.notifier.committedQuietly(pool);
    }
    return ids;
  }

  /** One row with a unique key: one upsert statement (see insertUniqueKeep in statements.ts). Returns the id it resolved to. */
  private async insertUnique(rows: readonly NewWork[], tx?: PoolClient | TransactionExecutor): Promise<string> {
    if (rows.length !== 1) throw new Error("workpool: a row with a uniqueKey is inserted alone");
    const row = rows[0]!;
    const db = tx !== undefined ? (this.checkOpen(), await this.txChecker.check(tx)) : (this.joined()?.ops.tx ?? this.db);
    const stmt = row.onConflict === "replace" ? this.stmts.insertUniqueReplace : this.stmts.insertUniqueKeep;
    const { rows: out } = await run<{ id: string }>(db, stmt, [...insertParams(rows).params, this.channel]);
    return out[0]!.id;
  }

  /** One statement in autocommit: see enqueue_claim() in schema.sql. */
  async insertAndClaim(row: NewWork, claim: ClaimOptions): Promise<WorkRow | null> {
    if (this.joined()) {
      await this.insertWork([row]);
      return null;
    }
    // The columns but the unique key, which rows taking this path do not have.
    const params = [...insertParams([row]).params.slice(0, 15), this.channel, claim.workerId, claim.now, claim.leaseUntil];
    const { rows } = await run<{ claimed: boolean }>(this.db, this.stmts.enqueueClaim, params);
    return rows[0]?.claimed ? claimedRow(row, 1, false, claim) : null;
  }

  /** One statement in autocommit: see claim() in schema.sql. */
  async claim(pool: string, opts: ClaimOptions): Promise<ClaimResult> {
    return claimOn(this.db, this.stmts, this.claimKeys, pool, opts);
  }

  /** One statement in autocommit: see complete() in schema.sql. */
  async complete(pool: string, writes: readonly CompletionWrite[], now: number, claim: ClaimOptions | null): Promise<CompleteResult> {
    return completeOn(this.db, this.stmts, this.claimKeys, this.channel, pool, writes, now, claim);
  }

  async heartbeat(pool: string, workerId: string, refs: readonly AttemptRef[], leaseUntil: number): Promise<HeartbeatResult> {
    const result: HeartbeatResult = { cancelRequested: [], lost: [] };
    if (!refs.length) return result;
    const { rows } = await run<{ id: string; cancel_requested: boolean }>(this.db, this.stmts.heartbeat, [
      pool,
      refs.map((r) => r.id),
      refs.map((r) => r.attempt),
      workerId,
      leaseUntil,
    ]);
    const held = new Map(rows.map((r) => [r.id, r.cancel_requested]));
    for (const ref of refs) {
      const cancel = held.get(ref.id);
      if (cancel === undefined) result.lost.push(ref.id);
      else if (cancel) result.cancelRequested.push(ref.id);
    }
    return result;
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

  listWork(pool: string, query: WorkListQuery): Promise<WorkListRow[]> {
    return this.admin.listWork(this.app, pool, query);
  }

  readWorkDetail(id: string): Promise<WorkDetailRow | null> {
    return this.admin.readWorkDetail(this.app, id);
  }

  changePoolLimit(pool: string, change: PoolLimitChange): Promise<void> {
    return this.admin.changePoolLimit(this.app, pool, change);
  }

  schemaVersion(): Promise<number> {
    return this.admin.schemaVersion(this.db);
  }

  /** BEGIN ... COMMIT on a client of the pool; nested in one of ours (cancel() from a mutation), a savepoint. */
  async transaction<T>(fn: (ops: TxOps<PoolClient>) => Promise<T>): Promise<T> {
    const outer = this.joined();
    if (outer) return outer.nested.run(() => outer.ops.savepoint(() => fn(outer.ops)));
    return inTransaction(this.openPool, async (client) => {
      const tx: OpenTx = { ops: new PgTxOps(client, this.stmts, this.channel, this.claimKeys), open: true, nested: new Mutex() };
      return this.inside.run(tx, () => fn(tx.ops));
    });
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
    if (this.closing) return () => undefined;
    return this.listener.subscribe(pool, onWake);
  }
}
