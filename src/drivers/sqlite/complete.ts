/**
 * complete() on SQLite: a batch of action results written and the slots they free claimed,
 * in one write transaction. Each write is fenced in its own UPDATE (`id`, `attempt`, still
 * running), so nothing is read back first; a requested cancel wins over the outcome.
 */
import type { Database } from "better-sqlite3";
import type { ClaimOptions, CompleteResult, CompletionWrite, PoolStats } from "../../driver/driver.js";
import type { SqliteClaim } from "./claim.js";
import { POOL_SQL } from "./pools.js";
import { prepared, type Prepared } from "./statements.js";
import { APPEND_ATTEMPT, appendAttempt } from "./tx-ops.js";

// For work without onComplete (its oc_state stays 'none'): each write fenced by attempt in
// the UPDATE itself, none while a cancel is requested (canceled writes those). The first is a
// success without an attempt record, with positional parameters.
const SQL = {
  finish: `UPDATE workpool_work
    SET state = 'finished', result = ?, finished_at = ?, worker_id = NULL, lease_until = NULL
    WHERE id = ? AND attempt = ? AND state = 'running' AND cancel_requested = 0`,
  finishLogged: `UPDATE workpool_work
    SET state = 'finished', result = @result, finished_at = @now,
        worker_id = NULL, lease_until = NULL, attempt_log = ${APPEND_ATTEMPT}
    WHERE id = @id AND attempt = @attempt AND state = 'running' AND cancel_requested = 0`,
  retry: `UPDATE workpool_work
    SET state = 'pending', run_at = @run_at, worker_id = NULL, lease_until = NULL, attempt_log = ${APPEND_ATTEMPT}
    WHERE id = @id AND attempt = @attempt AND state = 'running' AND cancel_requested = 0`,
  canceled: `UPDATE workpool_work
    SET state = 'finished', result = '{"kind":"canceled"}', finished_at = @now,
        worker_id = NULL, lease_until = NULL, attempt_log = ${appendAttempt("json_set(@entry, '$.outcome', 'canceled')")}
    WHERE id = @id AND attempt = @attempt AND state = 'running' AND cancel_requested = 1`,
} as const;

/** complete() of one connection (the store's): its statements prepared once. */
export class SqliteComplete {
  private readonly sql: Prepared<typeof SQL>;
  private readonly pools: Prepared<typeof POOL_SQL>;

  constructor(
    db: Database,
    private readonly claimer: SqliteClaim,
  ) {
    this.sql = prepared(db, SQL);
    this.pools = prepared(db, POOL_SQL);
  }

  /**
   * Writes action outcomes of `pool` under the write lock the caller holds (work without
   * onComplete only: its onComplete bookkeeping is left as it is), adds them to the report
   * counters and, given `claim`, claims for the freed slots as SqliteClaim does.
   */
  complete(pool: string, writes: readonly CompletionWrite[], now: number, claim: ClaimOptions | null): CompleteResult {
    const stale: string[] = [];
    const canceled: string[] = [];
    const stats: PoolStats = { completed: 0, succeeded: 0, failed: 0, retries: 0, canceled: 0 };
    for (const w of writes) {
      if (this.writeOutcome(w, now)) {
        if (w.status === "success") stats.succeeded++;
        else if (w.status === "failed") stats.failed++;
        else if (w.status === "retrying") stats.retries++;
        else stats.canceled++;
      } else if (this.sql.canceled.run({ id: w.id, attempt: w.attempt, now, entry: w.attemptEntry ?? null }).changes) {
        // Not written as it was only because a cancel was requested while it ran.
        canceled.push(w.id);
        stats.canceled++;
      } else stale.push(w.id);
    }
    stats.completed = writes.length - stale.length;
    if (stats.completed) this.pools.addStats.run({ pool, ...stats });
    return { stale, canceled, claim: claim ? this.claimer.claim(pool, claim) : null };
  }

  /** Writes one outcome where the row is still on its attempt and no cancel was requested; true if it was. */
  private writeOutcome(w: CompletionWrite, now: number): boolean {
    const entry = w.attemptEntry ?? null;
    if (w.status === "retrying") return this.sql.retry.run({ id: w.id, attempt: w.attempt, run_at: w.runAt, entry }).changes > 0;
    // The common case, a success: no attempt record, positional parameters.
    if (entry === null) return this.sql.finish.run(w.result, now, w.id, w.attempt).changes > 0;
    return this.sql.finishLogged.run({ id: w.id, attempt: w.attempt, result: w.result, now, entry }).changes > 0;
  }
}
