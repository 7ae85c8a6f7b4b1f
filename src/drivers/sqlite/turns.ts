/**
 * Keys in turn (SQLite): the due rows a claim takes when pending work has keys. Within a
 * priority (lowest first) each key with due work takes one row in turn, so a key with a
 * short backlog starts within a few claims whatever other keys hold. Keys take turns in
 * key order, work without a key being one more key after them, starting after the pool's
 * `turn_key` (the key the last claim served last) and wrapping around; while free slots
 * remain, the keys served take further turns. A priority without keyed work is taken in
 * claim order (run_at, id).
 *
 * Cost: the first round walks workpool_work_ready_key from key to key (one probe to the
 * next key, one for its oldest due row); later rounds one probe per row. A key at its
 * per-key parallelism has its due rows of the priority parked (as the claim parks them:
 * see claim.ts); one at its rate limit is passed over. Keys passed over cost a probe each:
 * after `free + 16` of them the claim stops looking for more keys (the next claim goes on
 * after the last key looked at), so probes grow with the rows taken, not with the keys.
 */
import type { Database } from "better-sqlite3";
import type { ClaimAt } from "../../driver/driver.js";
import type { RateWindow } from "./rate-limits.js";
import { prepared, type Prepared } from "./statements.js";

const READY = `FROM workpool_work WHERE pool = ? AND state = 'pending' AND parked = 0 AND priority = ?`;

const SQL = {
  keyedIn: `SELECT 1 ${READY} AND key IS NOT NULL LIMIT 1`,
  dueIn: `SELECT id ${READY} AND run_at <= ? ORDER BY run_at, id LIMIT ?`,
  firstKey: `SELECT key ${READY} AND key IS NOT NULL ORDER BY key LIMIT 1`,
  firstKeyUpTo: `SELECT key ${READY} AND key <= ? ORDER BY key LIMIT 1`,
  nextKey: `SELECT key ${READY} AND key > ? ORDER BY key LIMIT 1`,
  nextKeyUpTo: `SELECT key ${READY} AND key > ? AND key <= ? ORDER BY key LIMIT 1`,
  // A key's next due row after the one it took last (run_at, id).
  rowOfKey: `SELECT id, run_at ${READY} AND key = ? AND run_at <= ? AND (run_at, id) > (?, ?) ORDER BY run_at, id LIMIT 1`,
  rowOfNone: `SELECT id, run_at ${READY} AND key IS NULL AND run_at <= ? AND (run_at, id) > (?, ?) ORDER BY run_at, id LIMIT 1`,
  // The rows this claim took (@taken, JSON) are still pending: they stay out.
  park: `UPDATE workpool_work SET parked = 1
    WHERE pool = ? AND state = 'pending' AND parked = 0 AND priority = ? AND key = ? AND run_at <= ?
      AND id NOT IN (SELECT value FROM json_each(?))`,
  turnKey: `SELECT turn_key FROM workpool_pools WHERE name = ?`,
  setTurnKey: `UPDATE workpool_pools SET turn_key = ? WHERE name = ? AND turn_key IS NOT ?`,
} as const;

/** A key's turn: the key (null: work without a key) and the row it took. */
interface Turn {
  key: string | null;
  runAt: number;
  id: string;
}

/** Before every row: where a key's first turn starts looking. */
const FROM_START = { runAt: Number.MIN_SAFE_INTEGER, id: "" };

/** What one claim may take: its time, free slots and the limits the keys take turns under. */
export interface TurnLimits {
  opts: ClaimAt;
  free: number;
  /** The per-key parallelism (Infinity: none). */
  limit: number;
  /** Running attempts per key, counted up as rows are taken. */
  perKey: Map<string, number>;
  rate: RateWindow | null;
}

/** The turns of one connection (the store's): its statements prepared once. */
export class KeyTurns {
  private readonly sql: Prepared<typeof SQL>;

  constructor(db: Database) {
    this.sql = prepared(db, SQL);
  }

  /** Whether unparked pending work of `pool` has a key: one probe per priority (of `priorities`). */
  keyedPending(pool: string, priorities: Iterable<number>): boolean {
    for (const priority of priorities) if (this.sql.keyedIn.get(pool, priority)) return true;
    return false;
  }

  /** The ids of the rows the claim takes, in turn order; parks the due rows of keys at their limit. */
  pick(pool: string, priorities: Iterable<number>, lim: TurnLimits): string[] {
    const taken: string[] = [];
    const budget = lim.free + 16;
    let misses = 0;
    let turn = (this.sql.turnKey.get(pool) as { turn_key: string | null } | undefined)?.turn_key ?? null;
    for (const priority of priorities) {
      if (taken.length >= lim.free || misses >= budget) break;
      if (!this.sql.keyedIn.get(pool, priority)) {
        for (const r of this.sql.dueIn.all(pool, priority, lim.opts.now, lim.free - taken.length) as { id: string }[]) taken.push(r.id);
        continue;
      }
      // The first round: every key with due work once, in turn order.
      let round: Turn[] = [];
      for (const key of this.keysAfter(pool, priority, turn)) {
        if (taken.length >= lim.free || misses >= budget) break;
        // Looked at: the next claim starts after this key even if it takes nothing here.
        turn = key;
        const row = this.turnOf(pool, priority, key, FROM_START, taken, lim);
        if (row) round.push(row);
        else misses++;
      }
      // Further rounds, while slots remain, among the keys served.
      while (taken.length < lim.free && round.length) {
        const next: Turn[] = [];
        for (const last of round) {
          if (taken.length >= lim.free) break;
          const row = this.turnOf(pool, priority, last.key, last, taken, lim);
          if (row) {
            next.push(row);
            turn = row.key;
          }
        }
        round = next;
      }
    }
    this.sql.setTurnKey.run(turn, pool, turn);
    return taken;
  }

  /**
   * The keys of `priority` with unparked pending work, in turn order after `start`: the keys
   * after it, work without a key (null), then from the first key up to `start` itself.
   * One probe each, read as the walk goes (taking rows does not move keys of the index).
   */
  private *keysAfter(pool: string, priority: number, start: string | null): Generator<string | null> {
    type KeyRow = { key: string } | undefined;
    const next = (after: string | null, upTo: string | null): string | undefined => {
      const { firstKey, firstKeyUpTo, nextKey, nextKeyUpTo } = this.sql;
      const row = (
        after === null
          ? upTo === null
            ? firstKey.get(pool, priority)
            : firstKeyUpTo.get(pool, priority, upTo)
          : upTo === null
            ? nextKey.get(pool, priority, after)
            : nextKeyUpTo.get(pool, priority, after, upTo)
      ) as KeyRow;
      return row?.key;
    };
    for (let key = next(start, null); key !== undefined; key = next(key, null)) yield key;
    yield null;
    if (start === null) return;
    for (let key = next(null, start); key !== undefined; key = next(key, start)) yield key;
  }

  /** One turn of `key` after its row `last`: the row it takes (pushed onto `taken`), or null. */
  private turnOf(
    pool: string,
    priority: number,
    key: string | null,
    last: Omit<Turn, "key">,
    taken: string[],
    lim: TurnLimits,
  ): Turn | null {
    const now = lim.opts.now;
    if (key === null) {
      const row = this.sql.rowOfNone.get(pool, priority, now, last.runAt, last.id) as { id: string; run_at: number } | undefined;
      if (!row) return null;
      taken.push(row.id);
      return { key, runAt: row.run_at, id: row.id };
    }
    const n = lim.perKey.get(key) ?? 0;
    if (n >= lim.limit) {
      this.sql.park.run(pool, priority, key, now, JSON.stringify(taken));
      return null;
    }
    const row = this.sql.rowOfKey.get(pool, priority, key, now, last.runAt, last.id) as { id: string; run_at: number } | undefined;
    if (!row || (lim.rate && !lim.rate.take(key))) return null;
    lim.perKey.set(key, n + 1);
    taken.push(row.id);
    return { key, runAt: row.run_at, id: row.id };
  }
}
