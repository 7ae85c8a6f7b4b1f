/**
 * claim(): due work of a pool moved to `running` for a worker in one call of the schema's
 * claim() function (see schema.sql), which enforces the pool's maxParallelism under the
 * pool row's lock; and where in the pending index each claim of this process starts.
 */
import type { ClaimOptions, ClaimResult, WorkRow } from "../../driver/driver.js";
import { run, type Queryable } from "./connection.js";
import { toClaimResult, type PgClaimRow } from "./rows.js";
import { SendTime } from "./send-time.js";
import { statementsOf } from "./statements.js";

/**
 * See claim() in schema.sql: lock, count, claim, in one round trip. $1 pool, $2 worker,
 * $3 now, $4 lease_until, $5 limit, $6/$7/$8 the key to take due rows after first
 * (priority, run_at, id; NULL: from the head).
 */
const claimSql = (s: string) => ({
  claim: `SELECT * FROM ${s}.claim($1::text, $2::text, $3::bigint, $4::bigint, $5::int, $6::int, $7::bigint, $8::text)`,
});

/**
 * How often a claim walks the pending index from its head whatever its key, ms: the
 * longest that work which became due behind the key waits for its turn while the rows
 * after the key keep the pool busy (see claim() in schema.sql).
 */
export const WALK_FROM_HEAD_EVERY_MS = 100;

/** A claim's key: the (priority, run_at, id) to take due rows after first, or nulls to walk from the head. */
export type ClaimKey = [priority: number | null, runAt: number | null, id: string | null];

/** The key that makes a claim walk the pending index from its head. */
export const FROM_HEAD: ClaimKey = [null, null, null];

/**
 * Per pool, the key of the last work this process claimed, passed to the next claim so it
 * starts its walk of the pending index there (within that work's priority, when no work
 * of a lower priority is pending) instead of at the head, past the dead
 * entries that earlier claims left (see claim() in schema.sql). At least every
 * {@link WALK_FROM_HEAD_EVERY_MS} a claim passes no key and walks from the head.
 *
 * A key only chooses which due rows fill a claim's free slots, never how many: a stale
 * one (its claim rolled back, another process claimed past it) costs at most a walk.
 */
export class ClaimKeys {
  private readonly pools = new Map<string, { priority: number; runAt: number; id: string; fromHeadAt: number }>();

  /** The key for a claim of `pool` at `now` (the claim's clock time). */
  next(pool: string, now: number): ClaimKey {
    const key = this.pools.get(pool);
    if (!key) return FROM_HEAD;
    // A clock that went back counts as due too.
    if (now - key.fromHeadAt >= WALK_FROM_HEAD_EVERY_MS || now < key.fromHeadAt) {
      key.fromHeadAt = now;
      return FROM_HEAD;
    }
    return [key.priority, key.runAt, key.id];
  }

  /** Records what a claim of `pool` at `now` took: the key moves to the last of it. */
  record(pool: string, claimed: readonly WorkRow[], now: number): void {
    let key = this.pools.get(pool);
    for (const row of claimed) {
      if (!key) {
        key = { priority: row.priority, runAt: row.runAt, id: row.id, fromHeadAt: now };
        this.pools.set(pool, key);
      } else if (isAfter(row, key)) {
        key.priority = row.priority;
        key.runAt = row.runAt;
        key.id = row.id;
      }
    }
  }
}

/** Whether `row` comes after `key` in claim order. Ids are ASCII, so JavaScript's order is the index's ("C" collation). */
function isAfter(row: WorkRow, key: { priority: number; runAt: number; id: string }): boolean {
  if (row.priority !== key.priority) return row.priority > key.priority;
  return row.runAt > key.runAt || (row.runAt === key.runAt && row.id > key.id);
}

/** Claims due work of `pool` in `schema` on `db` (the pool, or a client inside BEGIN). */
export async function claimOn(db: Queryable, schema: string, keys: ClaimKeys, pool: string, opts: ClaimOptions): Promise<ClaimResult> {
  const [afterPriority, afterRunAt, afterId] = keys.next(pool, opts.clock());
  const time = new SendTime(opts);
  const { rows } = await run<PgClaimRow>(db, statementsOf(schema, claimSql).claim, [
    pool,
    opts.workerId,
    time.now,
    time.leaseUntil,
    opts.limit,
    afterPriority,
    afterRunAt,
    afterId,
  ]);
  const at = time.read();
  const result = rows[0] ? toClaimResult(rows[0], pool, at) : null;
  if (!result) throw new Error(`workpool: pool "${pool}" has no stored configuration (was the pool started?)`);
  keys.record(pool, result.claimed, at.now);
  return result;
}
