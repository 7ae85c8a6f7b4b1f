/**
 * Schedules on PostgreSQL (ScheduleOps in the driver interface). A tick is one statement:
 * the compare-and-set of the schedule's next_run_at and the insert of its work (with its
 * NOTIFY), so it commits whole or not at all and only once per tick.
 */
import type { CatchUp, ScheduleAdvance, ScheduleOps, ScheduleRow, ScheduleWrite } from "../../driver/schedule-ops.js";
import { columnList, ROW_COLUMNS, rowValues } from "../../driver/work-columns.js";
import type { WorkKind } from "../../types.js";
import { run } from "./connection.js";
import type { PgConnections } from "./connection/connections.js";
import { columnParams } from "./insert.js";
import { statementsOf, type Statements } from "./statements.js";

const COLUMNS = `pool, id, cron, timezone, catch_up, kind, fn_name, args, options, next_run_at, last_tick, last_work_id, revision,
  created_at, updated_at`;

/** The parameter of the tick's first work column: the work's columns (ROW_COLUMNS) follow the step's seven. */
const WORK_FROM = 8;
/** The parameter of the tick's work id. */
const WORK_ID = WORK_FROM + ROW_COLUMNS.findIndex((c) => c.field === "id");

function scheduleSql(s: string) {
  return {
    upsert: `INSERT INTO ${s}.schedules AS c
        (pool, id, cron, timezone, catch_up, kind, fn_name, args, options, next_run_at, created_at, updated_at)
      VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, $10::bigint, $11::bigint, $11::bigint)
      ON CONFLICT (pool, id) DO UPDATE SET
        next_run_at = CASE WHEN c.cron = excluded.cron AND c.timezone = excluded.timezone THEN c.next_run_at ELSE excluded.next_run_at END,
        cron = excluded.cron, timezone = excluded.timezone, catch_up = excluded.catch_up, kind = excluded.kind,
        fn_name = excluded.fn_name, args = excluded.args, options = excluded.options, revision = c.revision + 1,
        updated_at = excluded.updated_at`,
    delete: `DELETE FROM ${s}.schedules WHERE pool = $1::text AND id = $2::text`,
    list: `SELECT ${COLUMNS} FROM ${s}.schedules WHERE ($1::text IS NULL OR pool = $1::text) ORDER BY pool, id`,
    due: `SELECT ${COLUMNS} FROM ${s}.schedules WHERE pool = $1::text AND next_run_at <= $2::bigint ORDER BY next_run_at LIMIT $3::int`,
    nextAt: `SELECT min(next_run_at) AS t FROM ${s}.schedules WHERE pool = $1::text AND next_run_at > $2::bigint`,
    // $1 pool, $2 id, $3 revision, $4 expected next_run_at, $5 new next_run_at, $6 tick (NULL: skip),
    // $7 channel, $8... the work's columns (NULL id: none).
    advance: `WITH adv AS (
        UPDATE ${s}.schedules SET next_run_at = $5::bigint, last_tick = coalesce($6::bigint, last_tick),
          last_work_id = coalesce($${WORK_ID}::text, last_work_id)
        WHERE pool = $1::text AND id = $2::text AND revision = $3::int AND next_run_at = $4::bigint
        RETURNING pool),
      ins AS (
        INSERT INTO ${s}.work (${columnList(ROW_COLUMNS)}, state)
        SELECT ${columnParams(ROW_COLUMNS, WORK_FROM)}, 'pending'
        FROM adv WHERE $${WORK_ID}::text IS NOT NULL
        RETURNING pool)
      SELECT (SELECT count(*) FROM adv)::int AS applied, (SELECT count(pg_notify($7::text, ins.pool)) FROM ins)::int AS notified`,
  };
}

type ScheduleStatements = Statements<ReturnType<typeof scheduleSql>>;

interface PgScheduleRow {
  pool: string;
  id: string;
  cron: string;
  timezone: string;
  catch_up: string;
  kind: string;
  fn_name: string;
  args: string;
  options: string;
  next_run_at: string;
  last_tick: string | null;
  last_work_id: string | null;
  revision: number;
  created_at: string;
  updated_at: string;
}

function toSchedule(r: PgScheduleRow): ScheduleRow {
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
    nextRunAt: Number(r.next_run_at),
    lastTick: r.last_tick === null ? null : Number(r.last_tick),
    lastWorkId: r.last_work_id,
    revision: r.revision,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** The schedule operations of the PostgreSQL driver. */
export class PgSchedules implements ScheduleOps {
  private readonly sql: ScheduleStatements;

  constructor(
    schema: string,
    private readonly channel: string,
    private readonly conn: PgConnections,
  ) {
    this.sql = statementsOf(schema, scheduleSql);
  }

  /** One statement in autocommit: the compare-and-set, the insert and its NOTIFY. */
  async advanceSchedule(pool: string, step: ScheduleAdvance): Promise<boolean> {
    const work = step.tick ? rowValues(step.tick.work) : ROW_COLUMNS.map(() => null);
    const head = [pool, step.id, step.revision, step.expectNextRunAt, step.nextRunAt, step.tick?.at ?? null, this.channel];
    const { rows } = await run<{ applied: number }>(this.conn.db, this.sql.advance, [...head, ...work]);
    return rows[0]!.applied > 0;
  }

  async deleteSchedule(pool: string, id: string): Promise<boolean> {
    return (await run(this.conn.app, this.sql.delete, [pool, id])).rowCount > 0;
  }

  async dueSchedules(pool: string, now: number, limit: number): Promise<{ due: ScheduleRow[]; nextAt: number | null }> {
    const db = this.conn.db;
    const due = (await run<PgScheduleRow>(db, this.sql.due, [pool, now, limit])).rows.map(toSchedule);
    const t = (await run<{ t: string | null }>(db, this.sql.nextAt, [pool, now])).rows[0]?.t ?? null;
    return { due, nextAt: t === null ? null : Number(t) };
  }

  async listSchedules(pool: string | null): Promise<ScheduleRow[]> {
    return (await run<PgScheduleRow>(this.conn.app, this.sql.list, [pool])).rows.map(toSchedule);
  }

  async upsertSchedule(pool: string, w: ScheduleWrite): Promise<void> {
    const values = [pool, w.id, w.cron, w.timezone, w.catchUp, w.kind, w.fnName, w.args, w.options, w.nextRunAt, w.now];
    await run(this.conn.app, this.sql.upsert, values);
  }
}
