/**
 * The rate-limit step of the SQLite claim, under the write lock the claim holds: the
 * pool's starts in its sliding window (and each key's in its own) bound what the claim
 * may take, every start is recorded, and a claim held back says when the first window
 * lets the next start in, so the worker sleeps until then.
 */
import type { Database, Statement } from "better-sqlite3";
import type { Statements } from "./statements.js";
import type { SqliteRateRow } from "./schedules.js";

const SQL = {
  readRates: `SELECT rate_limit, rate_period_ms, key_rate_limit, key_rate_period_ms FROM workpool_pools WHERE name = ?`,
  prune: `DELETE FROM workpool_starts WHERE pool = ? AND at <= ?`,
  countSince: `SELECT count(*) AS n FROM workpool_starts WHERE pool = ? AND at > ?`,
  nthSince: `SELECT at FROM workpool_starts WHERE pool = ? AND at > ? ORDER BY at LIMIT 1 OFFSET ?`,
  keyCounts: `SELECT key, count(*) AS n FROM workpool_starts WHERE pool = ? AND key IS NOT NULL AND at > ? GROUP BY key`,
  keysOldest: `SELECT min(at) AS t FROM workpool_starts WHERE pool = ? AND key IN (SELECT value FROM json_each(?)) AND at > ?`,
  record: `INSERT INTO workpool_starts (pool, at, key) SELECT ?, ?, value FROM json_each(?)`,
  nextRunAfter: `SELECT min(run_at) AS t FROM workpool_work WHERE pool = ? AND state = 'pending' AND parked = 0 AND run_at > ?`,
} as const;

type RateStatements = { [K in keyof typeof SQL]: Statement };
const cache = new WeakMap<Database, RateStatements>();

function statementsOf(db: Database): RateStatements {
  let stmts = cache.get(db);
  if (!stmts) {
    const prepared: Partial<Record<keyof typeof SQL, Statement>> = {};
    for (const key of Object.keys(SQL) as (keyof typeof SQL)[]) prepared[key] = db.prepare(SQL[key]);
    stmts = prepared as RateStatements;
    cache.set(db, stmts);
  }
  return stmts;
}

/** The windows of one claim of a rate-limited pool. */
export class RateWindow {
  /** Starts the pool's window has room for (Infinity without a pool limit). */
  readonly room: number;
  /** Keys passed over at their rate limit. */
  private readonly held = new Set<string>();

  private constructor(
    private readonly stmts: RateStatements,
    private readonly pool: string,
    private readonly now: number,
    private readonly rate: { limit: number; periodMs: number } | null,
    private readonly keyRate: { limit: number; periodMs: number; started: Map<string, number> } | null,
  ) {
    this.room = rate ? Math.max(0, rate.limit - (stmts.countSince.get(pool, now - rate.periodMs) as { n: number }).n) : Infinity;
  }

  /** The pool's windows at `now`, or null when it has no rate limit (one read of its row). */
  static open(claimStmts: Statements, pool: string, now: number): RateWindow | null {
    const stmts = statementsOf(claimStmts.readPool.database);
    const r = stmts.readRates.get(pool) as SqliteRateRow | undefined;
    if (!r || (r.rate_limit === null && r.key_rate_limit === null)) return null;
    const rate = r.rate_limit === null ? null : { limit: r.rate_limit, periodMs: r.rate_period_ms! };
    let keyRate = null;
    // Starts older than the longest window count for nothing any more.
    stmts.prune.run(pool, now - Math.max(rate?.periodMs ?? 0, r.key_rate_period_ms ?? 0));
    if (r.key_rate_limit !== null) {
      const periodMs = r.key_rate_period_ms!;
      const rows = stmts.keyCounts.all(pool, now - periodMs) as { key: string; n: number }[];
      keyRate = { limit: r.key_rate_limit, periodMs, started: new Map(rows.map((k) => [k.key, k.n])) };
    }
    return new RateWindow(stmts, pool, now, rate, keyRate);
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

  /** Records the starts of the claimed rows' attempts. */
  record(keys: readonly (string | null)[]): void {
    if (keys.length) this.stmts.record.run(this.pool, this.now, JSON.stringify(keys));
  }

  /**
   * What the worker sleeps until after this claim: `next` (the claim's own answer, from
   * `nextRunAt()`) unless a window held work back. While the pool's window is full nothing
   * starts before it opens; while a key's is, its work waits for it or for work due later.
   */
  nextWake(next: number | null, ranOut: boolean, nextRunAt: () => number | null): number | null {
    if (this.rate) {
      const n = (this.stmts.countSince.get(this.pool, this.now - this.rate.periodMs) as { n: number }).n;
      if (n >= this.rate.limit) {
        const oldest = this.stmts.nthSince.get(this.pool, this.now - this.rate.periodMs, n - this.rate.limit) as { at: number };
        const pending = nextRunAt();
        return pending === null ? null : Math.max(pending, oldest.at + this.rate.periodMs);
      }
    }
    if (!ranOut || !this.keyRate || this.held.size === 0) return next;
    const since = this.now - this.keyRate.periodMs;
    const oldest = (this.stmts.keysOldest.get(this.pool, JSON.stringify([...this.held]), since) as { t: number | null }).t;
    const later = (this.stmts.nextRunAfter.get(this.pool, this.now) as { t: number | null }).t;
    const opens = oldest === null ? null : oldest + this.keyRate.periodMs;
    if (opens === null) return later;
    return later === null ? opens : Math.min(opens, later);
  }
}
