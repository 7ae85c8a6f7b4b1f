/**
 * Pools on PostgreSQL (PoolOps in the driver interface): a pool's stored configuration and
 * limits (seeded on first use, overridden by what the application set explicitly, paused
 * and resumed by the admin), its report counters and counts, and its maintenance
 * leadership. A changed limit wakes every process's workers of the pool.
 */
import type { PoolConfig, PoolCounts, PoolLimitChange, PoolOps, PoolStats, RateLimits } from "../../driver/driver.js";
import type { LogLevel } from "../../events.js";
import { run } from "./connection.js";
import type { PgConnections } from "./connection/connections.js";
import { NOTIFY } from "./connection/notifier.js";
import { PgRateLimits } from "./rate-limits.js";
import { num, type BigIntText } from "./rows.js";
import { statementsOf, type Statements } from "./statements.js";

/** The statements about a pool's row, its counters and its leadership. */
export function poolSql(s: string) {
  const work = `${s}.work`;
  // $2 channel (the workers of every process re-read the limit): the limit changes.
  const notifying = (update: string) => `WITH u AS (${update} RETURNING name) SELECT pg_notify($2::text, u.name) FROM u`;
  return {
    // $1 pool, $2/$3/$6 seed, $4/$5 overrides (null: keep the stored value), $7 whether
    // to set key_parallelism to $8 (which may be null: no per-key limit). While the pool is
    // paused, a maxParallelism override sets the limit a resume restores.
    upsertPool: `INSERT INTO ${s}.pools AS p (name, max_parallelism, log_level, key_parallelism)
      VALUES ($1::text, coalesce($4::int, $2::int), coalesce($5::text, $3::text), CASE WHEN $7::boolean THEN $8::int ELSE $6::int END)
      ON CONFLICT (name) DO UPDATE SET
        max_parallelism = CASE WHEN p.paused_from IS NULL THEN coalesce($4::int, p.max_parallelism) ELSE p.max_parallelism END,
        paused_from = CASE WHEN p.paused_from IS NULL THEN NULL ELSE coalesce($4::int, p.paused_from) END,
        log_level = coalesce($5::text, p.log_level),
        key_parallelism = CASE WHEN $7::boolean THEN $8::int ELSE p.key_parallelism END
      RETURNING max_parallelism, log_level, key_parallelism`,
    readPool: `SELECT max_parallelism, log_level, key_parallelism FROM ${s}.pools WHERE name = $1::text`,
    // After the per-key limit changed: work parked at the old limit goes back to the claim.
    unparkAll: `UPDATE ${work} SET parked = FALSE WHERE pool = $1::text AND state = 'pending' AND parked`,
    pause: notifying(
      `UPDATE ${s}.pools SET paused_from = max_parallelism, max_parallelism = 0 WHERE name = $1::text AND paused_from IS NULL`,
    ),
    resume: notifying(
      `UPDATE ${s}.pools SET max_parallelism = paused_from, paused_from = NULL WHERE name = $1::text AND paused_from IS NOT NULL`,
    ),
    // $3 the new limit.
    setLimit: notifying(`UPDATE ${s}.pools SET max_parallelism = $3::int, paused_from = NULL WHERE name = $1::text`),
    counts: `SELECT count(*) FILTER (WHERE state = 'pending')::int AS pending,
        count(*) FILTER (WHERE state = 'pending' AND run_at <= $2::bigint)::int AS due,
        count(*) FILTER (WHERE state = 'running')::int AS running
      FROM ${work} WHERE pool = $1::text AND state IN ('pending', 'running')`,
    // The shard is picked by connection (stats_shard(), inlined by the planner): concurrent
    // transactions use different rows.
    addStats: `INSERT INTO ${s}.stats AS t (pool, shard, completed, succeeded, failed, retries, canceled)
      VALUES ($1::text, ${s}.stats_shard(), $2::bigint, $3::bigint, $4::bigint, $5::bigint, $6::bigint)
      ON CONFLICT (pool, shard) DO UPDATE SET
        completed = t.completed + excluded.completed, succeeded = t.succeeded + excluded.succeeded,
        failed = t.failed + excluded.failed, retries = t.retries + excluded.retries, canceled = t.canceled + excluded.canceled`,
    readStats: `SELECT coalesce(sum(completed), 0)::bigint AS completed, coalesce(sum(succeeded), 0)::bigint AS succeeded,
        coalesce(sum(failed), 0)::bigint AS failed, coalesce(sum(retries), 0)::bigint AS retries,
        coalesce(sum(canceled), 0)::bigint AS canceled
      FROM ${s}.stats WHERE pool = $1::text`,
    acquireLeader: `INSERT INTO ${s}.leaders AS l (pool, worker_id, expires_at) VALUES ($1::text, $2::text, $3::bigint)
      ON CONFLICT (pool) DO UPDATE SET worker_id = excluded.worker_id, expires_at = excluded.expires_at
      WHERE l.worker_id = excluded.worker_id OR l.expires_at < $4::bigint
      RETURNING worker_id`,
    releaseLeader: `DELETE FROM ${s}.leaders WHERE pool = $1::text AND worker_id = $2::text`,
  };
}

/** A row of the pools table. */
export interface PgPoolRow {
  max_parallelism: number;
  log_level: string;
  key_parallelism: number | null;
}

/** A row of summed stats. */
export interface PgStatsRow {
  completed: BigIntText;
  succeeded: BigIntText;
  failed: BigIntText;
  retries: BigIntText;
  canceled: BigIntText;
}

/** Converts a pool row. */
export function toPoolConfig(r: PgPoolRow): PoolConfig {
  return { maxParallelism: r.max_parallelism, logLevel: r.log_level as LogLevel, keyParallelism: r.key_parallelism };
}

/** Converts summed stats. */
export function toPoolStats(r: PgStatsRow | undefined): PoolStats {
  if (!r) return { completed: 0, succeeded: 0, failed: 0, retries: 0, canceled: 0 };
  return {
    completed: num(r.completed),
    succeeded: num(r.succeeded),
    failed: num(r.failed),
    retries: num(r.retries),
    canceled: num(r.canceled),
  };
}

/** The pool operations of the PostgreSQL driver. */
export class PgPools implements PoolOps {
  private readonly sql: Statements<ReturnType<typeof poolSql>>;
  private readonly rates: PgRateLimits;

  constructor(
    schema: string,
    private readonly channel: string,
    private readonly conn: PgConnections,
  ) {
    this.sql = statementsOf(schema, poolSql);
    this.rates = new PgRateLimits(schema, channel, conn);
  }

  async acquireLeadership(pool: string, workerId: string, now: number, ttlMs: number): Promise<boolean> {
    const { rowCount } = await run(this.conn.db, this.sql.acquireLeader, [pool, workerId, now + ttlMs, now]);
    return rowCount > 0;
  }

  async changePoolLimit(pool: string, change: PoolLimitChange): Promise<void> {
    const db = this.conn.app;
    if ("pause" in change) await run(db, this.sql.pause, [pool, this.channel]);
    else if ("resume" in change) await run(db, this.sql.resume, [pool, this.channel]);
    else await run(db, this.sql.setLimit, [pool, this.channel, change.maxParallelism]);
  }

  countRateLimited(pool: string, now: number): Promise<number> {
    return this.rates.countRateLimited(pool, now);
  }

  async counts(pool: string, now: number): Promise<PoolCounts> {
    const row = (await run<{ pending: number; due: number; running: number }>(this.conn.app, this.sql.counts, [pool, now])).rows[0]!;
    return { pending: row.pending, running: row.running, backlog: row.due };
  }

  /**
   * Seeds the pool's row if it has none, applies `overrides` and returns the stored config.
   * The connection is asked again for each statement, so a store closed in between refuses the rest.
   */
  async ensurePool(pool: string, seed: PoolConfig, overrides: Partial<PoolConfig>): Promise<PoolConfig> {
    const { rows } = await run<PgPoolRow>(this.conn.app, this.sql.upsertPool, [
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
    if (overrides.keyParallelism !== undefined) await run(this.conn.app, this.sql.unparkAll, [pool]);
    // A changed limit concerns workers in every process (a raised one frees slots).
    if (overrides.maxParallelism !== undefined || overrides.logLevel !== undefined || overrides.keyParallelism !== undefined) {
      await run(this.conn.app, NOTIFY, [this.channel, pool]);
    }
    return toPoolConfig(rows[0]!);
  }

  async readPoolConfig(pool: string): Promise<PoolConfig | null> {
    const { rows } = await run<PgPoolRow>(this.conn.app, this.sql.readPool, [pool]);
    return rows[0] ? toPoolConfig(rows[0]) : null;
  }

  readRateLimits(pool: string): Promise<RateLimits> {
    return this.rates.readRateLimits(pool);
  }

  async readStats(pool: string): Promise<PoolStats> {
    return toPoolStats((await run<PgStatsRow>(this.conn.app, this.sql.readStats, [pool])).rows[0]);
  }

  async releaseLeadership(pool: string, workerId: string): Promise<void> {
    await run(this.conn.db, this.sql.releaseLeader, [pool, workerId]);
  }

  setRateLimits(pool: string, limits: Partial<RateLimits>): Promise<void> {
    return this.rates.setRateLimits(pool, limits);
  }
}
