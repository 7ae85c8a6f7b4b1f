/**
 * Schedules on SQLite (ScheduleOps in the driver interface), run under the store's
 * connection lock: writes in BEGIN IMMEDIATE, SQLite's write lock, so a tick's
 * compare-and-set and the insert of its work are one transaction.
 */
import type { Database } from "better-sqlite3";
import type { CatchUp, ScheduleAdvance, ScheduleOps, ScheduleRow, ScheduleWrite } from "../../driver/schedule-ops.js";
import { newWorkValues } from "../../driver/work-columns.js";
import type { WorkKind } from "../../types.js";
import type { SqliteConnectionAccess } from "./connection/connection-access.js";
import type { PoolWakeups } from "./connection/wakeups.js";
import { INSERT_SQL } from "./insert.js";
import { prepared, type Prepared } from "./statements.js";

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

/** The schedule operations of the SQLite driver, on the store's connection. */
export class SqliteSchedules implements ScheduleOps {
  private readonly sql: Prepared<typeof SQL>;
  private readonly insert: Prepared<typeof INSERT_SQL>["insert"];

  constructor(
    db: Database,
    private readonly access: SqliteConnectionAccess,
    private readonly wakeups: PoolWakeups,
  ) {
    this.sql = prepared(db, SQL);
    this.insert = prepared(db, INSERT_SQL).insert;
  }

  /** The compare-and-set and the tick's insert, in one write transaction. */
  async advanceSchedule(pool: string, step: ScheduleAdvance): Promise<boolean> {
    const applied = await this.access.write(() => {
      const changed = this.sql.advance.run({
        pool,
        id: step.id,
        revision: step.revision,
        expect: step.expectNextRunAt,
        next_run_at: step.nextRunAt,
        tick: step.tick?.at ?? null,
        work_id: step.tick?.work.id ?? null,
      }).changes;
      if (changed === 0) return false;
      if (step.tick) this.insert.run(newWorkValues(step.tick.work));
      return true;
    });
    if (applied && step.tick) this.wakeups.wakeSoon([{ pool }]);
    return applied;
  }

  deleteSchedule(pool: string, id: string): Promise<boolean> {
    return this.access.write(() => this.sql.delete.run(pool, id).changes > 0);
  }

  dueSchedules(pool: string, now: number, limit: number): Promise<{ due: ScheduleRow[]; nextAt: number | null }> {
    return this.access.read(() => {
      const due = (this.sql.due.all(pool, now, limit) as SqliteScheduleRow[]).map(toSchedule);
      return { due, nextAt: (this.sql.nextAt.get(pool, now) as { t: number | null }).t };
    });
  }

  listSchedules(pool: string | null): Promise<ScheduleRow[]> {
    return this.access.read(() => (this.sql.list.all({ pool }) as SqliteScheduleRow[]).map(toSchedule));
  }

  upsertSchedule(pool: string, w: ScheduleWrite): Promise<void> {
    return this.access.write(() => {
      this.sql.upsert.run({
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
    });
  }
}
