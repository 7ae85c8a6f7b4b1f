/**
 * The PostgreSQL driver: a pg.Pool for statements and transactions, plus one LISTEN
 * connection for wake-ups.
 *
 * Why it is shaped this way:
 * - The global maxParallelism is enforced in `claim`: one transaction locks the pool's
 *   row (FOR UPDATE), so claims of one pool run one at a time across every process, then
 *   counts running work and takes at most the free slots with FOR UPDATE SKIP LOCKED.
 * - Everything that can be one statement is one statement in autocommit (enqueue,
 *   heartbeat, leadership, reads); batches are arrays, never one statement per row.
 * - Transactions that await handlers hold their own client; the rest of the driver keeps
 *   working on other connections of the pool meanwhile.
 * - Connection faults surface as rejected promises. The core retries claims, result
 *   writes and heartbeats with backoff; the pool replaces dead connections; the
 *   listener reconnects by itself.
 */
import type { Client, Pool, PoolClient } from "pg";
import {
  DRIVER,
  type AttemptRef,
  type ClaimResult,
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
import { inTransaction, run } from "./connection.js";
import { Listener } from "./listener.js";
import { migratePostgres } from "./migrate.js";
import { channelName } from "./names.js";
import { byRunAtThenId, insertArrays, toPoolConfig, toPoolStats, toWorkRow, type PgPoolRow, type PgStatsRow, type PgWorkRow } from "./rows.js";
import { statementsFor, type Statements } from "./statements.js";
import { PgTxOps } from "./tx-ops.js";

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
}

function closedError(): Error {
  return new Error("workpool: this PostgreSQL store is closed (close() was called); create a new store");
}

/** A row of the claim statement: summary columns plus a claimed row (all null if none). */
type ClaimRow = { running_count: number; next_run_at: string | number | null } & ({ id: string } & PgWorkRow | { id: null });

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
  /** The LISTEN side of the store (exposed for diagnostics and tests). */
  readonly listener: Listener;
  private readonly ownsPool: boolean;
  private readonly stmts: Statements;
  private readonly channel: string;
  private migrated: Promise<void> | null = null;
  private closing: Promise<void> | null = null;

  constructor(config: PostgresDriverConfig) {
    this.pool = config.pool;
    this.ownsPool = config.ownsPool;
    this.schema = config.schema;
    this.pollIntervalMs = config.pollIntervalMs;
    this.stmts = statementsFor(config.schema);
    this.channel = channelName(config.schema);
    this.listener = new Listener(config.newListenClient, this.channel);
  }

  /** Creates or upgrades the schema. Runs once per store; a failed run is retried on the next call. */
  migrate(): Promise<void> {
    if (this.closing) return Promise.reject(closedError());
    this.migrated ??= migratePostgres(this.pool, this.schema).catch((e: unknown) => {
      this.migrated = null;
      throw e;
    });
    return this.migrated;
  }

  /** Closes the LISTEN connection and, if the store created it, the pool. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.listener.close();
      if (this.ownsPool) await this.pool.end();
    })();
    return this.closing;
  }

  private checkOpen(): void {
    if (this.closing) throw closedError();
  }

  /** The pool, once the store is known to be open. */
  private get db(): Pool {
    this.checkOpen();
    return this.pool;
  }

  async ensurePool(pool: string, seed: PoolConfig, overrides: Partial<PoolConfig>): Promise<PoolConfig> {
    const { rows } = await run<PgPoolRow>(this.db, this.stmts.upsertPool, [
      pool,
      seed.maxParallelism,
      seed.logLevel,
      overrides.maxParallelism ?? null,
      overrides.logLevel ?? null,
    ]);
    // A changed limit concerns workers in every process (a raised one frees slots).
    if (overrides.maxParallelism !== undefined || overrides.logLevel !== undefined) {
      await run(this.db, this.stmts.notify, [this.channel, pool]);
    }
    return toPoolConfig(rows[0]!);
  }

  async readPoolConfig(pool: string): Promise<PoolConfig | null> {
    const { rows } = await run<PgPoolRow>(this.db, this.stmts.readPool, [pool]);
    return rows[0] ? toPoolConfig(rows[0]) : null;
  }

  /**
   * One statement for the whole batch. Without `tx` it commits on its own (autocommit);
   * with `tx` it runs on the caller's client inside their transaction, and the work and
   * its notification exist only if they commit.
   */
  async insertWork(rows: readonly NewWork[], tx?: PoolClient): Promise<void> {
    if (!rows.length) return;
    const params = [...insertArrays(rows), this.channel];
    if (tx === undefined) {
      await run(this.db, this.stmts.insertWork, params);
      return;
    }
    if (tx === null || typeof tx !== "object" || typeof (tx as { query?: unknown }).query !== "function") {
      throw new InvalidArgumentError("tx", "must be a pg client (from pool.connect()) inside the caller's BEGIN");
    }
    this.checkOpen();
    await run(tx, this.stmts.insertWork, params);
  }

  async claim(pool: string, opts: { workerId: string; now: number; leaseUntil: number; limit: number }): Promise<ClaimResult> {
    return inTransaction(this.db, async (client) => {
      const poolRow = (await run<PgPoolRow>(client, this.stmts.lockPool, [pool])).rows[0];
      if (!poolRow) throw new Error(`workpool: pool "${pool}" has no stored configuration (was the pool started?)`);
      const config = toPoolConfig(poolRow);
      const { rows } = await run<ClaimRow>(client, this.stmts.claim, [pool, opts.workerId, opts.now, opts.leaseUntil, opts.limit, config.maxParallelism]);
      const first = rows[0]!;
      const claimed: WorkRow[] = [];
      for (const r of rows) if (r.id !== null) claimed.push(toWorkRow(r as PgWorkRow));
      claimed.sort(byRunAtThenId);
      return {
        claimed,
        config,
        running: first.running_count + claimed.length,
        nextRunAt: first.next_run_at === null ? null : Number(first.next_run_at),
      };
    });
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
    return (await run<PgWorkRow>(this.db, this.stmts.readWork, [pool, ids])).rows.map(toWorkRow);
  }

  async listCancelable(pool: string, before: number, limit: number): Promise<string[]> {
    return (await run<{ id: string }>(this.db, this.stmts.listCancelable, [pool, before, limit])).rows.map((r) => r.id);
  }

  async transaction<T>(fn: (ops: TxOps<PoolClient>) => Promise<T>): Promise<T> {
    return inTransaction(this.db, (client) => fn(new PgTxOps(client, this.stmts, this.channel)));
  }

  async acquireLeadership(pool: string, workerId: string, now: number, ttlMs: number): Promise<boolean> {
    const { rowCount } = await run(this.db, this.stmts.acquireLeader, [pool, workerId, now + ttlMs, now]);
    return rowCount > 0;
  }

  async releaseLeadership(pool: string, workerId: string): Promise<void> {
    await run(this.db, this.stmts.releaseLeader, [pool, workerId]);
  }

  async deleteFinished(pool: string, before: number, limit: number): Promise<number> {
    return (await run(this.db, this.stmts.deleteFinished, [pool, before, limit])).rowCount;
  }

  async deleteFinishedWork(pool: string, ids: readonly string[]): Promise<string[]> {
    if (!ids.length) return [];
    return (await run<{ id: string }>(this.db, this.stmts.deleteFinishedWork, [pool, ids])).rows.map((r) => r.id);
  }

  async readStats(pool: string): Promise<PoolStats> {
    return toPoolStats((await run<PgStatsRow>(this.db, this.stmts.readStats, [pool])).rows[0]);
  }

  async counts(pool: string, now: number): Promise<PoolCounts> {
    const row = (await run<{ pending: number; due: number; running: number }>(this.db, this.stmts.counts, [pool, now])).rows[0]!;
    return { pending: row.pending, running: row.running, backlog: row.due };
  }

  subscribe(pool: string, onWake: () => void): () => void {
    if (this.closing) return () => undefined;
    return this.listener.subscribe(pool, onWake);
  }
}
