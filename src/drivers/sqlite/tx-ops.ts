/**
 * The operations of an SQLite transaction (see TxOps in the driver interface), with their
 * SQL. better-sqlite3 is synchronous: every operation runs its statements at once on the
 * connection that holds the transaction.
 */
import type { Database } from "better-sqlite3";
import type {
  AttemptRef,
  ClaimOptions,
  ClaimResult,
  FinishWrite,
  OnCompleteWrite,
  PoolStats,
  RescheduleWrite,
  TxOps,
  WorkRow,
} from "../../driver/driver.js";
import type { SqliteClaim } from "./claim.js";
import { POOL_SQL } from "./pools.js";
import { toWorkRow, type SqliteWorkRow } from "./rows.js";
import { prepared, type Prepared } from "./statements.js";

/** attempt_log with the record `entry` (an SQL expression of JSON text) appended, keeping the last 10; unchanged when @entry is NULL. */
export const appendAttempt = (entry: string): string => `CASE
      WHEN @entry IS NULL THEN attempt_log
      WHEN json_array_length(coalesce(attempt_log, '[]')) >= 10 THEN json_insert(json_remove(attempt_log, '$[0]'), '$[#]', json(${entry}))
      ELSE json_insert(coalesce(attempt_log, '[]'), '$[#]', json(${entry}))
    END`;

/** attempt_log with the record @entry (JSON text) appended, keeping the last 10; unchanged when @entry is NULL. */
export const APPEND_ATTEMPT = appendAttempt("@entry");

export const TX_SQL = {
  lockWork: `SELECT * FROM workpool_work WHERE pool = ? AND id IN (SELECT value FROM json_each(?))`,
  expired: `SELECT * FROM workpool_work WHERE pool = ? AND state = 'running' AND lease_until < ? ORDER BY lease_until LIMIT ?`,
  onCompleteDue: `SELECT * FROM workpool_work WHERE pool = ? AND oc_state = 'pending' AND oc_run_at <= ? ORDER BY oc_run_at LIMIT ?`,
  // A row's oc_state is written only where it changes: an UPDATE that assigns it, even to its
  // own value, measured about 70 µs per row more than one that leaves it out.
  finish: `UPDATE workpool_work
    SET state = 'finished', result = @result, finished_at = @finished_at,
        worker_id = NULL, lease_until = NULL, attempt_log = ${APPEND_ATTEMPT}
    WHERE id = @id`,
  finishOnComplete: `UPDATE workpool_work
    SET state = 'finished', result = @result, finished_at = @finished_at, oc_state = @oc_state,
        oc_run_at = CASE WHEN @oc_state = 'pending' THEN @finished_at ELSE NULL END,
        worker_id = NULL, lease_until = NULL, attempt_log = ${APPEND_ATTEMPT}
    WHERE id = @id`,
  reschedule: `UPDATE workpool_work SET state = 'pending', run_at = @run_at, worker_id = NULL, lease_until = NULL,
    attempt_log = ${APPEND_ATTEMPT} WHERE id = @id`,
  release: `UPDATE workpool_work
    SET state = 'pending', attempt = attempt - 1, run_at = ?, worker_id = NULL, lease_until = NULL
    WHERE id = ? AND attempt = ? AND state = 'running'`,
  requestCancel: `UPDATE workpool_work SET cancel_requested = 1 WHERE id = ?`,
  updateOnComplete: `UPDATE workpool_work SET oc_state = @oc_state, oc_attempts = @oc_attempts, oc_run_at = @oc_run_at, oc_error = @oc_error
    WHERE id = @id`,
} as const;

const readRows = (rows: unknown[]): WorkRow[] => (rows as SqliteWorkRow[]).map(toWorkRow);

/** TxOps on the store's connection, inside the transaction it holds. */
export class SqliteTxOps implements TxOps<Database> {
  private savepointSeq = 0;
  private readonly sql: Prepared<typeof TX_SQL>;
  private readonly pools: Prepared<typeof POOL_SQL>;

  constructor(
    readonly tx: Database,
    private readonly claimer: SqliteClaim,
  ) {
    this.sql = prepared(tx, TX_SQL);
    this.pools = prepared(tx, POOL_SQL);
  }

  async addStats(pool: string, d: PoolStats): Promise<void> {
    this.pools.addStats.run({ pool, ...d });
  }

  async claim(pool: string, opts: ClaimOptions): Promise<ClaimResult> {
    return this.claimer.claim(pool, opts);
  }

  async finish(rows: readonly FinishWrite[]): Promise<void> {
    for (const r of rows) {
      const params = { id: r.id, result: r.result, finished_at: r.finishedAt, entry: r.attemptEntry ?? null };
      // A running row's oc_state is 'none': written only when it changes (see the statements).
      if (r.ocState === "none") this.sql.finish.run(params);
      else this.sql.finishOnComplete.run({ ...params, oc_state: r.ocState });
    }
  }

  async lockExpired(pool: string, now: number, limit: number): Promise<WorkRow[]> {
    return readRows(this.sql.expired.all(pool, now, limit));
  }

  async lockOnCompleteDue(pool: string, now: number, limit: number): Promise<WorkRow[]> {
    return readRows(this.sql.onCompleteDue.all(pool, now, limit));
  }

  async lockWork(pool: string, ids: readonly string[]): Promise<WorkRow[]> {
    return readRows(this.sql.lockWork.all(pool, JSON.stringify(ids)));
  }

  async release(refs: readonly AttemptRef[], runAt: number): Promise<void> {
    for (const r of refs) this.sql.release.run(runAt, r.id, r.attempt);
  }

  async requestCancel(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.sql.requestCancel.run(id);
  }

  async reschedule(rows: readonly RescheduleWrite[]): Promise<void> {
    for (const r of rows) this.sql.reschedule.run({ id: r.id, run_at: r.runAt, entry: r.attemptEntry ?? null });
  }

  async savepoint<T>(fn: () => Promise<T> | T): Promise<T> {
    const name = `workpool_sp_${++this.savepointSeq}`;
    this.tx.exec(`SAVEPOINT ${name}`);
    try {
      const result = await fn();
      this.tx.exec(`RELEASE ${name}`);
      return result;
    } catch (e) {
      // The handler may have ended the transaction itself (e.g. by running COMMIT).
      if (this.tx.inTransaction) this.tx.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
      throw e;
    }
  }

  async updateOnComplete(rows: readonly OnCompleteWrite[]): Promise<void> {
    for (const r of rows) {
      this.sql.updateOnComplete.run({
        id: r.id,
        oc_state: r.ocState,
        oc_attempts: r.ocAttempts,
        oc_run_at: r.ocRunAt,
        oc_error: r.ocError,
      });
    }
  }
}
