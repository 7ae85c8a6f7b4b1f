/**
 * Pools on SQLite: the stored configuration and limits of a pool, its report counters and
 * counts, and its maintenance leadership (PoolOps in the driver interface).
 */
import type { Database } from "better-sqlite3";
import type { PoolConfig, PoolCounts, PoolLimitChange, PoolOps, PoolStats, RateLimits } from "../../driver/driver.js";
import type { LogLevel } from "../../events.js";
import type { SqliteConnectionAccess } from "./connection/connection-access.js";
import type { PoolWakeups } from "./connection/wakeups.js";
import { SqliteRateLimits, type SqliteRateRow } from "./rate-limits.js";
import { prepared, type Prepared } from "./statements.js";

/** The statements about a pool's row, its counters and its leadership; the claim reads the pool's row and counts through them too. */
export const POOL_SQL = {
  // The configuration and the rate limits, in one read: a claim needs both.
  readPool: `SELECT max_parallelism, log_level, key_parallelism, rate_limit, rate_period_ms, key_rate_limit, key_rate_period_ms
    FROM workpool_pools WHERE name = ?`,
  seedPool: `INSERT INTO workpool_pools (name, max_parallelism, log_level, key_parallelism) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
  // While the pool is paused, the limit a resume restores is set instead.
  setMaxParallelism: `UPDATE workpool_pools
    SET max_parallelism = CASE WHEN paused_from IS NULL THEN @n ELSE max_parallelism END,
        paused_from = CASE WHEN paused_from IS NULL THEN NULL ELSE @n END
    WHERE name = @pool`,
  setLogLevel: `UPDATE workpool_pools SET log_level = ? WHERE name = ?`,
  setKeyParallelism: `UPDATE workpool_pools SET key_parallelism = ? WHERE name = ?`,
  unparkAll: `UPDATE workpool_work SET parked = 0 WHERE pool = ? AND state = 'pending' AND parked = 1`,
  pause: `UPDATE workpool_pools SET paused_from = max_parallelism, max_parallelism = 0 WHERE name = ? AND paused_from IS NULL`,
  resume: `UPDATE workpool_pools SET max_parallelism = paused_from, paused_from = NULL WHERE name = ? AND paused_from IS NOT NULL`,
  setLimit: `UPDATE workpool_pools SET max_parallelism = ?, paused_from = NULL WHERE name = ?`,
  countRunning: `SELECT count(*) AS n FROM workpool_work WHERE pool = ? AND state = 'running'`,
  countPending: `SELECT count(*) AS n, coalesce(sum(run_at <= ?), 0) AS due FROM workpool_work WHERE pool = ? AND state = 'pending'`,
  addStats: `INSERT INTO workpool_stats (pool, completed, succeeded, failed, retries, canceled)
    VALUES (@pool, @completed, @succeeded, @failed, @retries, @canceled)
    ON CONFLICT (pool) DO UPDATE SET
      completed = completed + excluded.completed, succeeded = succeeded + excluded.succeeded,
      failed = failed + excluded.failed, retries = retries + excluded.retries, canceled = canceled + excluded.canceled`,
  readStats: `SELECT completed, succeeded, failed, retries, canceled FROM workpool_stats WHERE pool = ?`,
  acquireLeader: `INSERT INTO workpool_leaders (pool, worker_id, expires_at) VALUES (@pool, @worker, @expires_at)
    ON CONFLICT (pool) DO UPDATE SET worker_id = excluded.worker_id, expires_at = excluded.expires_at
    WHERE workpool_leaders.worker_id = excluded.worker_id OR workpool_leaders.expires_at < @now`,
  releaseLeader: `DELETE FROM workpool_leaders WHERE pool = ? AND worker_id = ?`,
} as const;

/** A row of workpool_pools as readPool returns it. */
export interface SqlitePoolRow extends SqliteRateRow {
  max_parallelism: number;
  log_level: string;
  key_parallelism: number | null;
}

/** Converts a pool row. */
export function toPoolConfig(r: SqlitePoolRow): PoolConfig {
  return { maxParallelism: r.max_parallelism, logLevel: r.log_level as LogLevel, keyParallelism: r.key_parallelism };
}

/** The pool operations of the SQLite driver, on the store's connection. */
export class SqlitePools implements PoolOps {
  private readonly sql: Prepared<typeof POOL_SQL>;
  private readonly rates: SqliteRateLimits;

  constructor(
    db: Database,
    private readonly access: SqliteConnectionAccess,
    private readonly wakeups: PoolWakeups,
  ) {
    this.sql = prepared(db, POOL_SQL);
    this.rates = new SqliteRateLimits(db, access, wakeups);
  }

  acquireLeadership(pool: string, workerId: string, now: number, ttlMs: number): Promise<boolean> {
    return this.access.write(() => this.sql.acquireLeader.run({ pool, worker: workerId, expires_at: now + ttlMs, now }).changes > 0);
  }

  changePoolLimit(pool: string, change: PoolLimitChange): Promise<void> {
    const written = this.access.write(() => {
      if ("pause" in change) this.sql.pause.run(pool);
      else if ("resume" in change) this.sql.resume.run(pool);
      else this.sql.setLimit.run(change.maxParallelism, pool);
    });
    // A raised limit or a resume frees slots: wake this process's workers of the pool.
    return written.then(() => this.wakeups.wakeSoon([{ pool }]));
  }

  countRateLimited(pool: string, now: number): Promise<number> {
    return this.rates.countRateLimited(pool, now);
  }

  counts(pool: string, now: number): Promise<PoolCounts> {
    return this.access.read(() => {
      const p = this.sql.countPending.get(now, pool) as { n: number; due: number };
      const r = this.sql.countRunning.get(pool) as { n: number };
      return { pending: p.n, running: r.n, backlog: p.due };
    });
  }

  ensurePool(pool: string, seed: PoolConfig, overrides: Partial<PoolConfig>): Promise<PoolConfig> {
    return this.access.write(() => {
      this.sql.seedPool.run(pool, seed.maxParallelism, seed.logLevel, seed.keyParallelism);
      if (overrides.maxParallelism !== undefined) this.sql.setMaxParallelism.run({ n: overrides.maxParallelism, pool });
      if (overrides.logLevel !== undefined) this.sql.setLogLevel.run(overrides.logLevel, pool);
      if (overrides.keyParallelism !== undefined) {
        this.sql.setKeyParallelism.run(overrides.keyParallelism, pool);
        // Work parked at the old limit may have room under the new one: the claim walks it again.
        this.sql.unparkAll.run(pool);
      }
      return toPoolConfig(this.sql.readPool.get(pool) as SqlitePoolRow);
    });
  }

  readPoolConfig(pool: string): Promise<PoolConfig | null> {
    return this.access.read(() => {
      const row = this.sql.readPool.get(pool) as SqlitePoolRow | undefined;
      return row ? toPoolConfig(row) : null;
    });
  }

  readRateLimits(pool: string): Promise<RateLimits> {
    return this.rates.readRateLimits(pool);
  }

  readStats(pool: string): Promise<PoolStats> {
    return this.access.read(
      () => (this.sql.readStats.get(pool) as PoolStats | undefined) ?? { completed: 0, succeeded: 0, failed: 0, retries: 0, canceled: 0 },
    );
  }

  releaseLeadership(pool: string, workerId: string): Promise<void> {
    return this.access.write(() => {
      this.sql.releaseLeader.run(pool, workerId);
    });
  }

  setRateLimits(pool: string, limits: Partial<RateLimits>): Promise<void> {
    return this.rates.setRateLimits(pool, limits);
  }
}
