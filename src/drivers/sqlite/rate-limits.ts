/**
 * Rate limits on SQLite: the pool's stored limits, the count of work they hold back, and
 * the claim's rate step. Under the write lock the claim holds, the pool's starts in its
 * sliding window (and each key's in its own) bound what the claim may take, every start
 * is recorded, and a claim held back says when the first window lets the next start in,
 * so the worker sleeps until then. A window at `now` counts the starts in `(now - period, now]`.
 */
import type { Database } from "better-sqlite3";
import type { RateLimits } from "../../driver/driver.js";
import type { RateLimit } from "../../types.js";
import type { SqliteConnectionAccess } from "./connection/connection-access.js";
import type { PoolWakeups } from "./connection/wakeups.js";
import { prepared, type Prepared } from "./statements.js";

const SQL = {
  readRates: `SELECT rate_limit, rate_period_ms, key_rate_limit, key_rate_period_ms FROM workpool_pools WHERE name = ?`,
  setRate: `UPDATE workpool_pools SET rate_limit = ?, rate_period_ms = ? WHERE name = ?`,
  setKeyRate: `UPDATE workpool_pools SET key_rate_limit = ?, key_rate_period_ms = ? WHERE name = ?`,
  dueCount: `SELECT count(*) AS n FROM workpool_work WHERE pool = ? AND state = 'pending' AND run_at <= ?`,
  dueOfFullKeys: `SELECT count(*) AS n FROM workpool_work
    WHERE pool = @pool AND state = 'pending' AND run_at <= @now AND key IN (
      SELECT key FROM workpool_starts WHERE pool = @pool AND key IS NOT NULL AND at > @since GROUP BY key HAVING count(*) >= @limit)`,
  // The window of a claim.
  prune: `DELETE FROM workpool_starts WHERE pool = ? AND at <= ?`,
  countSince: `SELECT count(*) AS n FROM workpool_starts WHERE pool = ? AND at > ?`,
  nthSince: `SELECT at FROM workpool_starts WHERE pool = ? AND at > ? ORDER BY at LIMIT 1 OFFSET ?`,
  keyCounts: `SELECT key, count(*) AS n FROM workpool_starts WHERE pool = ? AND key IS NOT NULL AND at > ? GROUP BY key`,
  keysOldest: `SELECT min(at) AS t FROM workpool_starts WHERE pool = ? AND key IN (SELECT value FROM json_each(?)) AND at > ?`,
  record: `INSERT INTO workpool_starts (pool, at, key) SELECT ?, ?, value FROM json_each(?)`,
  nextRunAfter: `SELECT min(run_at) AS t FROM workpool_work WHERE pool = ? AND state = 'pending' AND parked = 0 AND run_at > ?`,
} as const;

type RateStatements = Prepared<typeof SQL>;

/** A pool row's rate-limit columns. */
export interface SqliteRateRow {
  rate_limit: number | null;
  rate_period_ms: number | null;
  key_rate_limit: number | null;
  key_rate_period_ms: number | null;
}

/** A limit from its two columns. */
export function toRateLimit(limit: number | null, periodMs: number | null): RateLimit | null {
  return limit === null || periodMs === null ? null : { limit, periodMs: Number(periodMs) };
}

/** The rate-limit operations of the driver (PoolOps), on the store's connection. */
export class SqliteRateLimits {
  private readonly sql: RateStatements;

  constructor(
    db: Database,
    private readonly access: SqliteConnectionAccess,
    private readonly wakeups: PoolWakeups,
  ) {
    this.sql = prepared(db, SQL);
  }

  countRateLimited(pool: string, now: number): Promise<number> {
    return this.access.read(() => {
      const { rateLimit, keyRateLimit } = this.read(pool);
      if (rateLimit) {
        const started = (this.sql.countSince.get(pool, now - rateLimit.periodMs) as { n: number }).n;
        if (started >= rateLimit.limit) return (this.sql.dueCount.get(pool, now) as { n: number }).n;
      }
      if (!keyRateLimit) return 0;
      const params = { pool, now, since: now - keyRateLimit.periodMs, limit: keyRateLimit.limit };
      return (this.sql.dueOfFullKeys.get(params) as { n: number }).n;
    });
  }

  readRateLimits(pool: string): Promise<RateLimits> {
    return this.access.read(() => this.read(pool));
  }

  setRateLimits(pool: string, limits: Partial<RateLimits>): Promise<void> {
    const written = this.access.write(() => {
      if (limits.rateLimit !== undefined) this.sql.setRate.run(limits.rateLimit?.limit ?? null, limits.rateLimit?.periodMs ?? null, pool);
      if (limits.keyRateLimit !== undefined) {
        this.sql.setKeyRate.run(limits.keyRateLimit?.limit ?? null, limits.keyRateLimit?.periodMs ?? null, pool);
      }
    });
    // A removed or raised limit may let held work start: wake this process's workers.
    return written.then(() => this.wakeups.wakeSoon([{ pool }]));
  }

  private read(pool: string): RateLimits {
    const r = this.sql.readRates.get(pool) as SqliteRateRow | undefined;
    if (!r) return { rateLimit: null, keyRateLimit: null };
    return { rateLimit: toRateLimit(r.rate_limit, r.rate_period_ms), keyRateLimit: toRateLimit(r.key_rate_limit, r.key_rate_period_ms) };
  }
}

/** The windows of one claim of a rate-limited pool. */
export class RateWindow {
  /** Starts the pool's window has room for (Infinity without a pool limit). */
  readonly room: number;
  /** Keys passed over at their rate limit. */
  private readonly held = new Set<string>();
  /** Starts in the pool's window, this claim's included once recorded. */
  private started: number;

  private constructor(
    private readonly sql: RateStatements,
    private readonly pool: string,
    private readonly now: number,
    private readonly rate: RateLimit | null,
    private readonly keyRate: { limit: number; periodMs: number; started: Map<string, number> } | null,
  ) {
    this.started = rate ? (sql.countSince.get(pool, now - rate.periodMs) as { n: number }).n : 0;
    this.room = rate ? Math.max(0, rate.limit - this.started) : Infinity;
  }

  /** The pool's windows at `now` from its row (read by the claim), or null when it has no rate limit. */
  static open(db: Database, pool: string, now: number, r: SqliteRateRow): RateWindow | null {
    if (r.rate_limit === null && r.key_rate_limit === null) return null;
    const sql = prepared(db, SQL);
    const rate = toRateLimit(r.rate_limit, r.rate_period_ms);
    const keyRateLimit = toRateLimit(r.key_rate_limit, r.key_rate_period_ms);
    // Starts older than the longest window count for nothing any more.
    sql.prune.run(pool, now - Math.max(rate?.periodMs ?? 0, keyRateLimit?.periodMs ?? 0));
    let keyRate = null;
    if (keyRateLimit) {
      const rows = sql.keyCounts.all(pool, now - keyRateLimit.periodMs) as { key: string; n: number }[];
      keyRate = { ...keyRateLimit, started: new Map(rows.map((k) => [k.key, k.n])) };
    }
    return new RateWindow(sql, pool, now, rate, keyRate);
  }

  /** Whether rows are picked one by one for their keys' windows. */
  get keyed(): boolean {
    return this.keyRate !== null;
  }

  /** Whether `key` may start one more attempt now; counts it as taken if so, notes it as held back if not. */
  take(key: string): boolean {
    if (!this.keyRate) return true;
    const n = this.keyRate.started.get(key) ?? 0;
    if (n >= this.keyRate.limit) {
      this.held.add(key);
      return false;
    }
    this.keyRate.started.set(key, n + 1);
    return true;
  }

  /** Records the starts of the claimed rows' attempts (at `now`, so inside the window). */
  record(keys: readonly (string | null)[]): void {
    if (!keys.length) return;
    this.sql.record.run(this.pool, this.now, JSON.stringify(keys));
    this.started += keys.length;
  }

  /**
   * What the worker sleeps until after this claim: `next` (the claim's own answer, from
   * `nextRunAt()`) unless a window held work back. While the pool's window is full nothing
   * starts before it opens; while a key's is, its work waits for it or for work due later.
   */
  nextWake(next: number | null, ranOut: boolean, nextRunAt: () => number | null): number | null {
    if (this.rate && this.started >= this.rate.limit) {
      // The window opens when the start that filled it leaves it.
      const filling = this.sql.nthSince.get(this.pool, this.now - this.rate.periodMs, this.started - this.rate.limit) as { at: number };
      const pending = nextRunAt();
      return pending === null ? null : Math.max(pending, filling.at + this.rate.periodMs);
    }
    if (!ranOut || !this.keyRate || this.held.size === 0) return next;
    const since = this.now - this.keyRate.periodMs;
    const oldest = (this.sql.keysOldest.get(this.pool, JSON.stringify([...this.held]), since) as { t: number | null }).t;
    const later = (this.sql.nextRunAfter.get(this.pool, this.now) as { t: number | null }).t;
    const opens = oldest === null ? null : oldest + this.keyRate.periodMs;
    if (opens === null) return later;
    return later === null ? opens : Math.min(opens, later);
  }
}
