/**
 * Rate limits on PostgreSQL: the pool's stored limits and the count of work they hold
 * back (the claim's rate step is in claim() in schema.sql). A window at `now` counts the
 * starts in `(now - period, now]`.
 */
import type { RateLimits } from "../../driver/driver.js";
import type { RateLimit } from "../../types.js";
import { run } from "./connection.js";
import type { PgConnections } from "./connection/connections.js";
import { NOTIFY } from "./connection/notifier.js";
import { statementsOf, type Statements } from "./statements.js";

function rateSql(s: string) {
  return {
    setRate: `UPDATE ${s}.pools SET rate_limit = $2::int, rate_period_ms = $3::bigint WHERE name = $1::text`,
    setKeyRate: `UPDATE ${s}.pools SET key_rate_limit = $2::int, key_rate_period_ms = $3::bigint WHERE name = $1::text`,
    readRates: `SELECT rate_limit, rate_period_ms::float8 AS rate_period_ms, key_rate_limit, key_rate_period_ms::float8 AS key_rate_period_ms
      FROM ${s}.pools WHERE name = $1::text`,
    startsSince: `SELECT count(*)::int AS n FROM ${s}.starts WHERE pool = $1::text AND at > $2::bigint`,
    dueCount: `SELECT count(*)::int AS n FROM ${s}.work WHERE pool = $1::text AND state = 'pending' AND run_at <= $2::bigint`,
    dueOfFullKeys: `SELECT count(*)::int AS n FROM ${s}.work
      WHERE pool = $1::text AND state = 'pending' AND run_at <= $2::bigint AND key IN (
        SELECT key FROM ${s}.starts WHERE pool = $1::text AND key IS NOT NULL AND at > $3::bigint GROUP BY key HAVING count(*) >= $4::int)`,
  };
}

/** A limit from its two columns (the period as a number or BIGINT text). */
export function toRateLimit(limit: number | null, periodMs: number | string | null): RateLimit | null {
  return limit === null || periodMs === null ? null : { limit, periodMs: Number(periodMs) };
}

/** The rate-limit operations of the driver (PoolOps). */
export class PgRateLimits {
  private readonly sql: Statements<ReturnType<typeof rateSql>>;

  constructor(
    schema: string,
    private readonly channel: string,
    private readonly conn: PgConnections,
  ) {
    this.sql = statementsOf(schema, rateSql);
  }

  async countRateLimited(pool: string, now: number): Promise<number> {
    const db = this.conn.app;
    const { rateLimit, keyRateLimit } = await this.readRateLimits(pool);
    if (rateLimit) {
      const started = (await run<{ n: number }>(db, this.sql.startsSince, [pool, now - rateLimit.periodMs])).rows[0]!.n;
      if (started >= rateLimit.limit) return (await run<{ n: number }>(db, this.sql.dueCount, [pool, now])).rows[0]!.n;
    }
    if (!keyRateLimit) return 0;
    const params = [pool, now, now - keyRateLimit.periodMs, keyRateLimit.limit];
    return (await run<{ n: number }>(db, this.sql.dueOfFullKeys, params)).rows[0]!.n;
  }

  async readRateLimits(pool: string): Promise<RateLimits> {
    const { rows } = await run<{
      rate_limit: number | null;
      rate_period_ms: number | null;
      key_rate_limit: number | null;
      key_rate_period_ms: number | null;
    }>(this.conn.app, this.sql.readRates, [pool]);
    const r = rows[0];
    if (!r) return { rateLimit: null, keyRateLimit: null };
    return { rateLimit: toRateLimit(r.rate_limit, r.rate_period_ms), keyRateLimit: toRateLimit(r.key_rate_limit, r.key_rate_period_ms) };
  }

  async setRateLimits(pool: string, limits: Partial<RateLimits>): Promise<void> {
    const db = this.conn.app;
    if (limits.rateLimit !== undefined) {
      await run(db, this.sql.setRate, [pool, limits.rateLimit?.limit ?? null, limits.rateLimit?.periodMs ?? null]);
    }
    if (limits.keyRateLimit !== undefined) {
      await run(db, this.sql.setKeyRate, [pool, limits.keyRateLimit?.limit ?? null, limits.keyRateLimit?.periodMs ?? null]);
    }
    // A removed or raised limit may let held work start, in any process.
    await run(this.conn.app, NOTIFY, [this.channel, pool]);
  }
}
