/**
 * The two calls that move work in and out of `running` on a busy pool, each one call of
 * a function in the schema (see schema.sql): claim(), and complete(), which writes a
 * batch of action results and claims the freed slots. Enforcing the pool's
 * maxParallelism happens in those functions, under the pool row's lock.
 */
import type { ClaimOptions, ClaimResult, CompleteResult, CompletionWrite, WorkRow } from "../../driver/driver.js";
import { run, type Queryable } from "./connection.js";
import { toClaimResult, type PgClaimRow } from "./rows.js";
import type { Statements } from "./statements.js";

/** The result a canceled attempt finishes with (a requested cancel wins over any outcome). */
const CANCELED_RESULT = JSON.stringify({ kind: "canceled" });

/**
 * How often a claim walks the pending index from its head whatever its key, ms: the
 * longest that work which became due behind the key waits for its turn while the rows
 * after the key keep the pool busy (see claim() in schema.sql).
 */
export const WALK_FROM_HEAD_EVERY_MS = 100;

/** A claim's key: the (run_at, id) to take due rows after first, or nulls to walk from the head. */
type ClaimKey = [runAt: number | null, id: string | null];

const FROM_HEAD: ClaimKey = [null, null];

/**
 * Per pool, the key of the last work this process claimed, passed to the next claim so it
 * starts its walk of the pending index there instead of at the head, past the dead
 * entries that earlier claims left (see claim() in schema.sql). At least every
 * {@link WALK_FROM_HEAD_EVERY_MS} a claim passes no key and walks from the head.
 *
 * A key only chooses which due rows fill a claim's free slots, never how many: a stale
 * one (its claim rolled back, another process claimed past it) costs at most a walk.
 */
export class ClaimKeys {
  private readonly pools = new Map<string, { runAt: number; id: string; fromHeadAt: number }>();

  /** The key for a claim of `pool` at `now` (the claim's clock time). */
  next(pool: string, now: number): ClaimKey {
    const key = this.pools.get(pool);
    if (!key) return FROM_HEAD;
    // A clock that went back counts as due too.
    if (now - key.fromHeadAt >= WALK_FROM_HEAD_EVERY_MS || now < key.fromHeadAt) {
      key.fromHeadAt = now;
      return FROM_HEAD;
    }
    return [key.runAt, key.id];
  }

  /** Records what a claim of `pool` at `now` took: the key moves to the last of it. */
  record(pool: string, claimed: readonly WorkRow[], now: number): void {
    let key = this.pools.get(pool);
    for (const row of claimed) {
      if (!key) {
        key = { runAt: row.runAt, id: row.id, fromHeadAt: now };
        this.pools.set(pool, key);
      } else if (row.runAt > key.runAt || (row.runAt === key.runAt && row.id > key.id)) {
        // Ids are ASCII, so JavaScript's order is the index's ("C" collation).
        key.runAt = row.runAt;
        key.id = row.id;
      }
    }
  }
}

/** Claims due work of `pool` on `db` (the pool, or a client inside BEGIN). */
export async function claimOn(db: Queryable, stmts: Statements, keys: ClaimKeys, pool: string, opts: ClaimOptions): Promise<ClaimResult> {
  const [afterRunAt, afterId] = keys.next(pool, opts.now);
  const { rows } = await run<PgClaimRow>(db, stmts.claim, [
    pool,
    opts.workerId,
    opts.now,
    opts.leaseUntil,
    opts.limit,
    afterRunAt,
    afterId,
  ]);
  const result = rows[0] ? toClaimResult(rows[0], pool, opts) : null;
  if (!result) throw new Error(`workpool: pool "${pool}" has no stored configuration (was the pool started?)`);
  keys.record(pool, result.claimed, opts.now);
  return result;
}

/** A row of complete(): what was written, then the claim's columns (NULL without a claim). */
type PgCompleteRow = PgClaimRow & { stale: string[]; canceled: string[] };

/** Writes action results of `pool` and claims for the freed slots, on `db`, in one statement. */
export async function completeOn(
  db: Queryable,
  stmts: Statements,
  keys: ClaimKeys,
  channel: string,
  pool: string,
  writes: readonly CompletionWrite[],
  now: number,
  claim: ClaimOptions | null,
): Promise<CompleteResult> {
  const [afterRunAt, afterId] = claim ? keys.next(pool, claim.now) : FROM_HEAD;
  const { rows } = await run<PgCompleteRow>(db, stmts.complete, [
    pool,
    outcomesJson(writes),
    CANCELED_RESULT,
    now,
    channel,
    claim?.workerId ?? "",
    claim?.leaseUntil ?? 0,
    claim?.limit ?? 0,
    afterRunAt,
    afterId,
  ]);
  const row = rows[0]!;
  const claimed = claim ? toClaimResult(row, pool, claim) : null;
  if (claim && claimed) keys.record(pool, claimed.claimed, claim.now);
  return { stale: row.stale, canceled: row.canceled, claim: claimed };
}

/**
 * The outcomes as one JSON object keyed by id, which complete() reads by lookup:
 * `{"<id>":[attempt,"<status>",<result as a JSON string, or null>,<runAt or null>],...}`.
 * Written out directly rather than built as objects and stringified: it runs for every
 * batch of a busy pool. Statuses are fixed words and the numbers are integers; ids and
 * results are escaped as JSON strings.
 */
export function outcomesJson(writes: readonly CompletionWrite[]): string {
  let json = "{";
  for (let i = 0; i < writes.length; i++) {
    const w = writes[i]!;
    if (i > 0) json += ",";
    json += `${JSON.stringify(w.id)}:[${w.attempt},"${w.status}",${w.result === null ? "null" : JSON.stringify(w.result)},${w.runAt === null ? "null" : w.runAt}]`;
  }
  return json + "}";
}
