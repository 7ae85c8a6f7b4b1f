/**
 * Schedules and rate limits on SQLite: the statements behind ScheduleOps, run by the
 * driver under its connection lock (writes in BEGIN IMMEDIATE, SQLite's write lock).
 */
import type { Database, Statement } from "better-sqlite3";
import type { CatchUp, RateLimits, ScheduleAdvance, ScheduleRow, ScheduleWrite } from "../../driver/schedule-ops.js";
import type { RateLimit, WorkKind } from "../../types.js";
import { newWorkValues } from "../../driver/work-columns.js";
import { insertSql } from "./statements.js";

const SQL = {
  upsert: `INSERT INTO workpool_schedules
    (pool, id, cron, timezone, catch_up, kind, fn_name, args, options, next_run_at, created_at, updated_at)
    VALUES (@pool, @id, @cron, @timezone, @catch_up, @kind, @fn_name, @args, @options, @next_run_at, @now, @now)
    ON CONFLICT (pool, id) DO UPDATE SET
      next_run_at = CASE WHEN cron = excluded.cron AND timezone = excluded.timezone THEN next_run_at ELSE excluded.next_run_at END,
      cron = excluded.cron, timezone = excluded.timezone, catch_up = excluded.catch_up, kind = excluded.kind,
      fn_name = excluded.fn_name, args = excluded.args, options = excluded.options, revision = revision + 1,
      updated_at = excluded.updated_at`,
  delete: `DELETE FROM workpool_schedules WHERE pool = ? AND id = ?`,
  list: `SELECT * FROM workpool_schedules WHERE (@pool IS NULL OR pool = @pool) ORDER BY pool, id`,
  due: `SELECT * FROM workpool_schedules WHERE pool = ? AND next_run_at <= ? ORDER BY next_run_at LIMIT ?`,
  nextAt: `SELECT min(next_run_at) AS t FROM workpool_schedules WHERE pool = ? AND next_run_at > ?`,
  advance: `UPDATE workpool_schedules
    SET next_run_at = @next_run_at, last_tick = coalesce(@tick, last_tick), last_work_id = coalesce(@work_id, last_work_id)
    WHERE pool = @pool AND id = @id AND revision = @revision AND next_run_at = @expect`,
  insertWork: insertSql(1),
  setRate: `UPDATE workpool_pools SET rate_limit = ?, rate_period_ms = ? WHERE name = ?`,
  setKeyRate: `UPDATE workpool_pools SET key_rate_limit = ?, key_rate_period_ms = ? WHERE name = ?`,
  startsSince: `SELECT count(*) AS n FROM workpool_starts WHERE pool = ? AND at > ?`,
  dueCount: `SELECT count(*) AS n FROM workpool_work WHERE pool = ? AND state = 'pending' AND run_at <= ?`,
  dueOfFullKeys: `SELECT count(*) AS n FROM workpool_work
    WHERE pool = @pool AND state = 'pending' AND run_at <= @now AND key IN (
      SELECT key FROM workpool_starts WHERE pool = @pool AND key IS NOT NULL AND at > @since GROUP BY key HAVING count(*) >= @limit)`,
  readRates: `SELECT rate_limit, rate_period_ms, key_rate_limit, key_rate_period_ms FROM workpool_pools WHERE name = ?`,
} as const;

interface SqliteScheduleRow {
  pool: string;
  id: string;
  cron: string;
  timezone: string;
  catch_up: string;
  kind: string;
  fn_name: string;
  args: string;
  options: string;
  next_run_at: number;
  last_tick: number | null;
  last_work_id: string | null;
  revision: number;
  created_at: number;
  updated_at: number;
}

/** A pool row's rate-limit columns. */
export interface SqliteRateRow {
  rate_limit: number | null;
  rate_period_ms: number | null;
  key_rate_limit: number | null;
  key_rate_period_ms: number | null;
}

function toSchedule(r: SqliteScheduleRow): ScheduleRow {
  return {
    pool: r.pool,
    id: r.id,
    cron: r.cron,
    timezone: r.timezone,
    catchUp: r.catch_up as CatchUp,
    kind: r.kind as WorkKind,
    fnName: r.fn_name,
    args: r.args,
    options: r.options,
    nextRunAt: r.next_run_at,
    lastTick: r.last_tick,
    lastWorkId: r.last_work_id,
    revision: r.revision,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** A limit from its two columns. */
export function toRateLimit(limit: number | null, periodMs: number | null): RateLimit | null {
  return limit === null || periodMs === null ? null : { limit, periodMs };
}

/** The schedule and rate-limit statements of one connection; every method runs synchronously. */
export class SqliteSchedules {
  private readonly stmts: { [K in keyof typeof SQL]: Statement };

  constructor(db: Database) {
    const prepared: Partial<Record<keyof typeof SQL, Statement>> = {};
    for (const key of Object.keys(SQL) as (keyof typeof SQL)[]) prepared[key] = db.prepare(SQL[key]);
    this.stmts = prepared as { [K in keyof typeof SQL]: Statement };
  }

  upsert(pool: string, w: ScheduleWrite): void {
    this.stmts.upsert.run({
      pool,
      id: w.id,
      cron: w.cron,
      timezone: w.timezone,
      catch_up: w.catchUp,
      kind: w.kind,
      fn_name: w.fnName,
      args: w.args,
      options: w.options,
      next_run_at: w.nextRunAt,
      now: w.now,
    });
  }

  delete(pool: string, id: string): boolean {
    return this.stmts.delete.run(pool, id).changes > 0;
  }

  list(pool: string | null): ScheduleRow[] {
    return (this.stmts.list.all({ pool }) as SqliteScheduleRow[]).map(toSchedule);
  }

  due(pool: string, now: number, limit: number): { due: ScheduleRow[]; nextAt: number | null } {
    const due = (this.stmts.due.all(pool, now, limit) as SqliteScheduleRow[]).map(toSchedule);
    return { due, nextAt: (this.stmts.nextAt.get(pool, now) as { t: number | null }).t };
  }

  /** The compare-and-set and the tick's insert; the caller runs it in one write transaction. */
  advance(pool: string, step: ScheduleAdvance): boolean {
    const applied = this.stmts.advance.run({
      pool,
      id: step.id,
      revision: step.revision,
      expect: step.expectNextRunAt,
      next_run_at: step.nextRunAt,
      tick: step.tick?.at ?? null,
      work_id: step.tick?.work.id ?? null,
    }).changes;
    if (applied === 0) return false;
    if (step.tick) this.stmts.insertWork.run(newWorkValues(step.tick.work));
    return true;
  }

  setRateLimits(pool: string, limits: Partial<RateLimits>): void {
    if (limits.rateLimit !== undefined) {
      this.stmts.setRate.run(limits.rateLimit?.limit ?? null, limits.rateLimit?.periodMs ?? null, pool);
    }
    if (limits.keyRateLimit !== undefined) {
      this.stmts.setKeyRate.run(limits.keyRateLimit?.limit ?? null, limits.keyRateLimit?.periodMs ?? null, pool);
    }
  }

  readRateLimits(pool: string): RateLimits {
    const r = this.stmts.readRates.get(pool) as SqliteRateRow | undefined;
    if (!r) return { rateLimit: null, keyRateLimit: null };
    return { rateLimit: toRateLimit(r.rate_limit, r.rate_period_ms), keyRateLimit: toRateLimit(r.key_rate_limit, r.key_rate_period_ms) };
  }

  countRateLimited(pool: string, now: number): number {
    const { rateLimit, keyRateLimit } = this.readRateLimits(pool);
    if (rateLimit) {
      const started = (this.stmts.startsSince.get(pool, now - rateLimit.periodMs) as { n: number }).n;
      if (started >= rateLimit.limit) return (this.stmts.dueCount.get(pool, now) as { n: number }).n;
    }
    if (!keyRateLimit) return 0;
    const params = { pool, now, since: now - keyRateLimit.periodMs, limit: keyRateLimit.limit };
    return (this.stmts.dueOfFullKeys.get(params) as { n: number }).n;
  }
}
