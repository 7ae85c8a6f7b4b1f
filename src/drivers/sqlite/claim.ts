/**
 * The SQLite claim: due work moved to `running` under the write lock the caller holds,
 * within the pool's maxParallelism and, when the pool sets one, its per-key limit.
 *
 * Order: lowest priority first, then earliest run_at, then id. The claim walks one
 * priority at a time, each as the index range `run_at <= now` of (pool, priority, run_at),
 * so work scheduled for later is never walked, whatever its priority.
 *
 * Per-key limit: a row whose key is at its limit (running attempts plus rows this claim
 * took) is *parked*: it leaves the claim's index, so the backlog of a key at its limit is
 * walked once rather than by every claim, and the claim goes on to other keys. When an
 * attempt of a key leaves `running`, a trigger notes the key in workpool_freed_keys; the
 * next claim gives back as many of its parked rows, in claim order, as it has room for.
 * A key is parked only at its limit and stays there until one of its attempts ends, so
 * no key with room keeps parked work past the next claim.
 *
 * Rate limits (rate-limit.ts): the pool's window bounds the free slots; under a per-key
 * rate limit rows are picked one by one and a key at its rate limit is passed over (not
 * parked: its window opens with time, not with a freed slot).
 */
import { claimAt, type ClaimAt, type ClaimOptions, type ClaimResult, type PoolConfig, type WorkRow } from "../../driver/driver.js";
import { toClaimedRow, toPoolConfig, type SqliteClaimedRow, type SqlitePoolRow } from "./rows.js";
import type { Statements } from "./statements.js";
import { RateWindow } from "./rate-limit.js";
import { byClaimOrder } from "../../driver/work-values.js";

/**
 * Claims due work of `pool` under the write lock the caller holds (its own BEGIN
 * IMMEDIATE, or an open transaction): reads the pool's limits, counts running work of
 * every process and takes at most the free slots.
 */
export function claimRows(stmts: Statements, pool: string, options: ClaimOptions): ClaimResult {
  // The write lock is held: the claim's time is read now, not before waiting for it.
  const opts = claimAt(options);
  const poolRow = stmts.readPool.get(pool) as SqlitePoolRow | undefined;
  if (!poolRow) throw new Error(`workpool: pool "${pool}" has no stored configuration (was the pool started?)`);
  const config = toPoolConfig(poolRow);
  const running = (stmts.countRunning.get(pool) as { n: number }).n;
  const rate = RateWindow.open(stmts, pool, opts.now);
  const free = Math.max(0, Math.min(opts.limit, config.maxParallelism - running, rate?.room ?? Infinity));
  const perKey = config.keyParallelism === null ? null : runningPerKey(stmts, pool);
  if (perKey) unparkFreed(stmts, pool, config, perKey);
  // With no per-key limit nothing is parked: the keys the trigger noted are of no use.
  else stmts.takeFreedKeys.run(pool);
  const claimed =
    free === 0
      ? []
      : perKey || rate?.keyed
        ? claimKeyed(stmts, pool, opts, free, config, perKey ?? new Map(), rate)
        : claimPlain(stmts, pool, opts, free);
  claimed.sort(byClaimOrder);
  let next = claimed.length < free ? nextRunAt(stmts, pool) : null;
  if (rate) {
    rate.record(claimed.map((r) => r.key));
    next = rate.nextWake(next, claimed.length < free, () => nextRunAt(stmts, pool));
  }
  return { now: opts.now, claimed, config, running: running + claimed.length, nextRunAt: next };
}

/** The priorities of the pool's unparked pending work, lowest first: one index probe each. */
function* priorities(stmts: Statements, pool: string): Generator<number> {
  let row = stmts.firstPriority.get(pool) as { priority: number } | undefined;
  while (row) {
    yield row.priority;
    row = stmts.nextPriority.get(pool, row.priority) as { priority: number } | undefined;
  }
}

/** Without a per-key limit: one statement per priority, each taking what is left of `free`. */
function claimPlain(stmts: Statements, pool: string, opts: ClaimAt, free: number): WorkRow[] {
  const claimed: WorkRow[] = [];
  for (const priority of priorities(stmts, pool)) {
    const params = { pool, priority, worker: opts.workerId, now: opts.now, lease_until: opts.leaseUntil, limit: free - claimed.length };
    for (const r of stmts.claimIn.all(params) as SqliteClaimedRow[]) claimed.push(toClaimedRow(r, pool, opts));
    if (claimed.length >= free) break;
  }
  return claimed;
}

/** Running attempts of the pool per key (at most maxParallelism rows to count). */
function runningPerKey(stmts: Statements, pool: string): Map<string, number> {
  const rows = stmts.runningKeys.all(pool) as { key: string; n: number }[];
  return new Map(rows.map((r) => [r.key, r.n]));
}

/** Gives back the parked work of the keys freed since the last claim, as much as each has room for. */
function unparkFreed(stmts: Statements, pool: string, config: PoolConfig, perKey: ReadonlyMap<string, number>): void {
  const freed = stmts.takeFreedKeys.all(pool) as { key: string }[];
  for (const { key } of freed) {
    const room = config.keyParallelism! - (perKey.get(key) ?? 0);
    if (room > 0) stmts.unparkKey.run(pool, key, room);
  }
}

/**
 * Under a per-key limit or per-key rate limit: walks due work in claim order, taking a row
 * while its key has room, parking it when its key is at its parallelism and passing it over
 * when its key is at its rate limit, until `free` rows are taken.
 */
function claimKeyed(
  stmts: Statements,
  pool: string,
  opts: ClaimAt,
  free: number,
  config: PoolConfig,
  perKey: Map<string, number>,
  rate: RateWindow | null,
): WorkRow[] {
  const limit = config.keyParallelism ?? Infinity;
  const take: string[] = [];
  const park: string[] = [];
  for (const priority of priorities(stmts, pool)) {
    // Collected first: the connection runs no other statement while an iterator is open.
    for (const r of stmts.dueIn.iterate(pool, priority, opts.now) as IterableIterator<{ id: string; key: string | null }>) {
      if (r.key === null) take.push(r.id);
      else {
        const n = perKey.get(r.key) ?? 0;
        if (n >= limit) park.push(r.id);
        else if (!rate || rate.take(r.key)) {
          take.push(r.id);
          perKey.set(r.key, n + 1);
        }
      }
      if (take.length >= free) break;
    }
    if (take.length >= free) break;
  }
  if (park.length) stmts.park.run(JSON.stringify(park));
  if (!take.length) return [];
  const params = { ids: JSON.stringify(take), worker: opts.workerId, now: opts.now, lease_until: opts.leaseUntil };
  return (stmts.claimIds.all(params) as SqliteClaimedRow[]).map((r) => toClaimedRow(r, pool, opts));
}

/** The earliest run_at of unparked pending work (parked work is due already): one probe per priority. */
function nextRunAt(stmts: Statements, pool: string): number | null {
  let next: number | null = null;
  for (const priority of priorities(stmts, pool)) {
    const t = (stmts.nextRunAtIn.get(pool, priority) as { t: number | null }).t;
    if (t !== null && (next === null || t < next)) next = t;
  }
  return next;
}
