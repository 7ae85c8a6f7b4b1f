/**
 * Schedules and rate limits on PostgreSQL: the statements behind ScheduleOps. A tick is
 * one statement: the compare-and-set of the schedule's next_run_at and the insert of its
 * work (with its NOTIFY), so it commits whole or not at all and only once per tick.
 */
import { createHash } from "node:crypto";
import type { CatchUp, RateLimits, ScheduleAdvance, ScheduleRow, ScheduleWrite } from "../../driver/schedule-ops.js";
import type { RateLimit, WorkKind } from "../../types.js";
import { run, type Queryable } from "./connection.js";
import { quoteIdent } from "./names.js";
import type { Statement } from "./statements.js";

const COLUMNS = `pool, id, cron, timezone, catch_up, kind, fn_name, args, options, next_run_at, last_tick, last_work_id, revision,
  created_at, updated_at`;

function texts(schema: string) {
  const s = quoteIdent(schema);
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
    // $7..$18, $20, $21 the work's columns (NULL id: none), $19 channel.
    advance: `WITH adv AS (
        UPDATE ${s}.schedules SET next_run_at = $5::bigint, last_tick = coalesce($6::bigint, last_tick),
          last_work_id = coalesce($7::text, last_work_id)
        WHERE pool = $1::text AND id = $2::text AND revision = $3::int AND next_run_at = $4::bigint
        RETURNING pool),
      ins AS (
        INSERT INTO ${s}.work (id, pool, kind, fn_name, name, args, state, run_at, enqueued_at, retry, timeout_ms, on_complete,
          context, priority, key, meta)
        SELECT $7::text, adv.pool, $8::text, $9::text, $10::text, $11::text, 'pending', $12::bigint, $13::bigint, $14::text,
          $15::bigint, $16::text, $17::text, $18::int, $20::text, $21::text
        FROM adv WHERE $7::text IS NOT NULL
        RETURNING pool)
      SELECT (SELECT count(*) FROM adv)::int AS applied, (SELECT count(pg_notify($19::text, ins.pool)) FROM ins)::int AS notified`,
    setRate: `UPDATE ${s}.pools SET rate_limit = $2::int, rate_period_ms = $3::bigint WHERE name = $1::text`,
    setKeyRate: `UPDATE ${s}.pools SET key_rate_limit = $2::int, key_rate_period_ms = $3::bigint WHERE name = $1::text`,
    startsSince: `SELECT count(*)::int AS n FROM ${s}.starts WHERE pool = $1::text AND at > $2::bigint`,
    dueCount: `SELECT count(*)::int AS n FROM ${s}.work WHERE pool = $1::text AND state = 'pending' AND run_at <= $2::bigint`,
    dueOfFullKeys: `SELECT count(*)::int AS n FROM ${s}.work
      WHERE pool = $1::text AND state = 'pending' AND run_at <= $2::bigint AND key IN (
        SELECT key FROM ${s}.starts WHERE pool = $1::text AND key IS NOT NULL AND at > $3::bigint GROUP BY key HAVING count(*) >= $4::int)`,
    readRates: `SELECT rate_limit, rate_period_ms::float8 AS rate_period_ms, key_rate_limit, key_rate_period_ms::float8 AS key_rate_period_ms
      FROM ${s}.pools WHERE name = $1::text`,
  };
}

type ScheduleStatements = { readonly [K in keyof ReturnType<typeof texts>]: Statement };

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

function toRateLimit(limit: number | null, periodMs: number | null): RateLimit | null {
  return limit === null || periodMs === null ? null : { limit, periodMs };
}

/** The schedule and rate-limit statements of one schema. */
export class PgSchedules {
  private readonly stmts: ScheduleStatements;

  constructor(
    schema: string,
    private readonly channel: string,
  ) {
    const built: Record<string, Statement> = {};
    for (const [key, text] of Object.entries(texts(schema))) {
      built[key] = { name: `workpool_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`, text };
    }
    this.stmts = built as ScheduleStatements;
  }

  async upsert(db: Queryable, pool: string, w: ScheduleWrite): Promise<void> {
    await run(db, this.stmts.upsert, [pool, w.id, w.cron, w.timezone, w.catchUp, w.kind, w.fnName, w.args, w.options, w.nextRunAt, w.now]);
  }

  async delete(db: Queryable, pool: string, id: string): Promise<boolean> {
    return (await run(db, this.stmts.delete, [pool, id])).rowCount > 0;
  }

  async list(db: Queryable, pool: string | null): Promise<ScheduleRow[]> {
    return (await run<PgScheduleRow>(db, this.stmts.list, [pool])).rows.map(toSchedule);
  }

  async due(db: Queryable, pool: string, now: number, limit: number): Promise<{ due: ScheduleRow[]; nextAt: number | null }> {
    const due = (await run<PgScheduleRow>(db, this.stmts.due, [pool, now, limit])).rows.map(toSchedule);
    const t = (await run<{ t: string | null }>(db, this.stmts.nextAt, [pool, now])).rows[0]?.t ?? null;
    return { due, nextAt: t === null ? null : Number(t) };
  }

  async advance(db: Queryable, pool: string, step: ScheduleAdvance): Promise<boolean> {
    const w = step.tick?.work ?? null;
    const { rows } = await run<{ applied: number }>(db, this.stmts.advance, [
      pool,
      step.id,
      step.revision,
      step.expectNextRunAt,
      step.nextRunAt,
      step.tick?.at ?? null,
      w?.id ?? null,
      w?.kind ?? null,
      w?.fnName ?? null,
      w?.name ?? null,
      w?.args ?? null,
      w?.runAt ?? null,
      w?.enqueuedAt ?? null,
      w?.retry ? JSON.stringify(w.retry) : null,
      w?.timeoutMs ?? null,
      w?.onComplete ?? null,
      w?.context ?? null,
      w?.priority ?? 0,
      this.channel,
      w?.key ?? null,
      w?.meta ?? null,
    ]);
    return rows[0]!.applied > 0;
  }

  async setRateLimits(db: Queryable, pool: string, limits: Partial<RateLimits>): Promise<void> {
    if (limits.rateLimit !== undefined) {
      await run(db, this.stmts.setRate, [pool, limits.rateLimit?.limit ?? null, limits.rateLimit?.periodMs ?? null]);
    }
    if (limits.keyRateLimit !== undefined) {
      await run(db, this.stmts.setKeyRate, [pool, limits.keyRateLimit?.limit ?? null, limits.keyRateLimit?.periodMs ?? null]);
    }
  }

  async readRateLimits(db: Queryable, pool: string): Promise<RateLimits> {
    const { rows } = await run<{
      rate_limit: number | null;
      rate_period_ms: number | null;
      key_rate_limit: number | null;
      key_rate_period_ms: number | null;
    }>(db, this.stmts.readRates, [pool]);
    const r = rows[0];
    if (!r) return { rateLimit: null, keyRateLimit: null };
    return { rateLimit: toRateLimit(r.rate_limit, r.rate_period_ms), keyRateLimit: toRateLimit(r.key_rate_limit, r.key_rate_period_ms) };
  }

  async countRateLimited(db: Queryable, pool: string, now: number): Promise<number> {
    const { rateLimit, keyRateLimit } = await this.readRateLimits(db, pool);
    if (rateLimit) {
      const started = (await run<{ n: number }>(db, this.stmts.startsSince, [pool, now - rateLimit.periodMs])).rows[0]!.n;
      if (started >= rateLimit.limit) return (await run<{ n: number }>(db, this.stmts.dueCount, [pool, now])).rows[0]!.n;
    }
    if (!keyRateLimit) return 0;
    const params = [pool, now, now - keyRateLimit.periodMs, keyRateLimit.limit];
    return (await run<{ n: number }>(db, this.stmts.dueOfFullKeys, params)).rows[0]!.n;
  }
}
