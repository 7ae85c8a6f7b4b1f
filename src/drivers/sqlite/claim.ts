/**
 * The SQLite claim: due work moved to `running` under the write lock the caller holds,
 * within the pool's maxParallelism and, when the pool sets one, its per-key limit.
 *
 * Order: lowest priority first; within a priority, when pending work has keys, each key
 * with due work takes one row in turn (turns.ts), else earliest run_at, then id. The claim
 * walks one priority at a time, each as the index range `run_at <= now`, so work
 * scheduled for later is never walked, whatever its priority.
 *
 * Per-key limit: a key at its limit (running attempts plus rows this claim took) has its
 * due rows *parked*: they leave the claim's indexes, so the backlog of a key at its limit is
 * walked once rather than by every claim, and the claim goes on to other keys. When an
 * attempt of a key leaves `running`, a trigger notes the key in workpool_freed_keys; the
 * next claim gives back as many of its parked rows, in claim order, as it has room for.
 * A key is parked only at its limit and stays there until one of its attempts ends, so
 * no key with room keeps parked work past the next claim.
 *
 * Rate limits (rate-limits.ts): the pool's window bounds the free slots; under a per-key
 * rate limit rows are picked one by one and a key at its rate limit is passed over (not
 * parked: its window opens with time, not with a freed slot).
 */
import type { Database } from "better-sqlite3";
import {
  byClaimOrder,
  claimAt,
  type ClaimAt,
  type ClaimOptions,
  type ClaimResult,
  type PoolConfig,
  type WorkRow,
} from "../../driver/driver.js";
import { POOL_SQL, toPoolConfig, type SqlitePoolRow } from "./pools.js";
import { RateWindow } from "./rate-limits.js";
import { CLAIMED_COLUMNS, toClaimedRow, type SqliteClaimedRow } from "./rows.js";
import { prepared, type Prepared } from "./statements.js";
import { KeyTurns } from "./turns.js";

const SQL = {
  runningKeys: `SELECT key, count(*) AS n FROM workpool_work WHERE pool = ? AND state = 'running' AND key IS NOT NULL GROUP BY key`,
  // The claim walks due unparked work one priority at a time.
  firstPriority: `SELECT priority FROM workpool_work WHERE pool = ? AND state = 'pending' AND parked = 0 ORDER BY priority LIMIT 1`,
  nextPriority: `SELECT priority FROM workpool_work
    WHERE pool = ? AND state = 'pending' AND parked = 0 AND priority > ? ORDER BY priority LIMIT 1`,
  claimIn: `UPDATE workpool_work
    SET state = 'running', attempt = attempt + 1, worker_id = @worker, lease_until = @lease_until, started_at = @now, unique_key = NULL
    WHERE id IN (
      SELECT id FROM workpool_work
      WHERE pool = @pool AND state = 'pending' AND parked = 0 AND priority = @priority AND run_at <= @now
      ORDER BY run_at, id LIMIT @limit)
    RETURNING ${CLAIMED_COLUMNS}`,
  claimIds: `UPDATE workpool_work
    SET state = 'running', attempt = attempt + 1, worker_id = @worker, lease_until = @lease_until, started_at = @now, unique_key = NULL
    WHERE id IN (SELECT value FROM json_each(@ids))
    RETURNING ${CLAIMED_COLUMNS}`,
  takeFreedKeys: `DELETE FROM workpool_freed_keys WHERE pool = ? RETURNING key`,
  unparkKey: `UPDATE workpool_work SET parked = 0 WHERE id IN (
    SELECT id FROM workpool_work WHERE pool = ? AND key = ? AND state = 'pending' AND parked = 1 ORDER BY priority, run_at, id LIMIT ?)`,
  nextRunAtIn: `SELECT min(run_at) AS t FROM workpool_work WHERE pool = ? AND state = 'pending' AND parked = 0 AND priority = ?`,
} as const;

/** The claim of one connection (the store's): its statements prepared once. */
export class SqliteClaim {
  private readonly sql: Prepared<typeof SQL>;
  private readonly pools: Prepared<typeof POOL_SQL>;
  private readonly turns: KeyTurns;

  constructor(private readonly db: Database) {
    this.sql = prepared(db, SQL);
    this.pools = prepared(db, POOL_SQL);
    this.turns = new KeyTurns(db);
  }

  /**
   * Claims due work of `pool` under the write lock the caller holds (its own BEGIN
   * IMMEDIATE, or an open transaction): reads the pool's limits, counts running work of
   * every process and takes at most the free slots.
   */
  claim(pool: string, options: ClaimOptions): ClaimResult {
    // The write lock is held: the claim's time is read now, not before waiting for it.
    const opts = claimAt(options);
    const poolRow = this.pools.readPool.get(pool) as SqlitePoolRow | undefined;
    if (!poolRow) throw new Error(`workpool: pool "${pool}" has no stored configuration (was the pool started?)`);
    const config = toPoolConfig(poolRow);
    const running = (this.pools.countRunning.get(pool) as { n: number }).n;
    const rate = RateWindow.open(this.db, pool, opts.now, poolRow);
    const free = Math.max(0, Math.min(opts.limit, config.maxParallelism - running, rate?.room ?? Infinity));
    const perKey = config.keyParallelism === null ? null : this.runningPerKey(pool);
    if (perKey) this.unparkFreed(pool, config, perKey);
    // With no per-key limit nothing is parked: the keys the trigger noted are of no use.
    else this.sql.takeFreedKeys.run(pool);
    // Work without keys is taken set-based in claim order; keys take turns.
    const claimed =
      free === 0
        ? []
        : this.turns.keyedPending(pool, this.priorities(pool))
          ? this.claimTurns(pool, opts, free, config, perKey ?? new Map(), rate)
          : this.claimPlain(pool, opts, free);
    claimed.sort(byClaimOrder);
    let next = claimed.length < free ? this.nextRunAt(pool) : null;
    if (rate) {
      rate.record(claimed.map((r) => r.key));
      next = rate.nextWake(next, claimed.length < free, () => this.nextRunAt(pool));
    }
    return { now: opts.now, claimed, config, running: running + claimed.length, nextRunAt: next };
  }

  /** The priorities of the pool's unparked pending work, lowest first: one index probe each. */
  private *priorities(pool: string): Generator<number> {
    let row = this.sql.firstPriority.get(pool) as { priority: number } | undefined;
    while (row) {
      yield row.priority;
      row = this.sql.nextPriority.get(pool, row.priority) as { priority: number } | undefined;
    }
  }

  /** Without a per-key limit: one statement per priority, each taking what is left of `free`. */
  private claimPlain(pool: string, opts: ClaimAt, free: number): WorkRow[] {
    const claimed: WorkRow[] = [];
    for (const priority of this.priorities(pool)) {
      const params = { pool, priority, worker: opts.workerId, now: opts.now, lease_until: opts.leaseUntil, limit: free - claimed.length };
      for (const r of this.sql.claimIn.all(params) as SqliteClaimedRow[]) claimed.push(toClaimedRow(r, pool, opts));
      if (claimed.length >= free) break;
    }
    return claimed;
  }

  /** Running attempts of the pool per key (at most maxParallelism rows to count). */
  private runningPerKey(pool: string): Map<string, number> {
    const rows = this.sql.runningKeys.all(pool) as { key: string; n: number }[];
    return new Map(rows.map((r) => [r.key, r.n]));
  }

  /** Gives back the parked work of the keys freed since the last claim, as much as each has room for. */
  private unparkFreed(pool: string, config: PoolConfig, perKey: ReadonlyMap<string, number>): void {
    const freed = this.sql.takeFreedKeys.all(pool) as { key: string }[];
    for (const { key } of freed) {
      const room = config.keyParallelism! - (perKey.get(key) ?? 0);
      if (room > 0) this.sql.unparkKey.run(pool, key, room);
    }
  }

  /** Keys in turn (turns.ts), then the rows taken moved to running. */
  private claimTurns(
    pool: string,
    opts: ClaimAt,
    free: number,
    config: PoolConfig,
    perKey: Map<string, number>,
    rate: RateWindow | null,
  ): WorkRow[] {
    const limit = config.keyParallelism ?? Infinity;
    const take = this.turns.pick(pool, this.priorities(pool), { opts, free, limit, perKey, rate });
    if (!take.length) return [];
    const params = { ids: JSON.stringify(take), worker: opts.workerId, now: opts.now, lease_until: opts.leaseUntil };
    return (this.sql.claimIds.all(params) as SqliteClaimedRow[]).map((r) => toClaimedRow(r, pool, opts));
  }

  /** The earliest run_at of unparked pending work (parked work is due already): one probe per priority. */
  private nextRunAt(pool: string): number | null {
    let next: number | null = null;
    for (const priority of this.priorities(pool)) {
      const t = (this.sql.nextRunAtIn.get(pool, priority) as { t: number | null }).t;
      if (t !== null && (next === null || t < next)) next = t;
    }
    return next;
  }
}
