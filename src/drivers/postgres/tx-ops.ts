/**
 * The operations of one PostgreSQL transaction (see TxOps in the driver interface), with
 * their SQL, run on the client that holds it. Each batch write is one statement.
 */
import type { PoolClient } from "pg";
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
import { claimOn, type ClaimKeys } from "./claim.js";
import { run } from "./connection.js";
import { NOTIFY } from "./connection/notifier.js";
import { poolSql } from "./pools.js";
import { toWorkRow, WORK_SELECT, type PgWorkRow } from "./rows.js";
import { statementsOf, type Statements } from "./statements.js";

function txSql(s: string) {
  const work = `${s}.work`;
  return {
    // Locks in id order, so transactions locking overlapping sets cannot deadlock.
    lockWork: `SELECT ${WORK_SELECT} FROM ${work} WHERE pool = $1::text AND id = ANY($2::text[]) ORDER BY id FOR UPDATE`,
    // Maintenance never waits: a row locked by someone else is being written right now.
    lockExpired: `SELECT ${WORK_SELECT} FROM ${work}
      WHERE pool = $1::text AND state = 'running' AND lease_until < $2::bigint
      ORDER BY lease_until LIMIT $3::int FOR UPDATE SKIP LOCKED`,
    lockOnCompleteDue: `SELECT ${WORK_SELECT} FROM ${work}
      WHERE pool = $1::text AND oc_state = 'pending' AND oc_run_at <= $2::bigint
      ORDER BY oc_run_at LIMIT $3::int FOR UPDATE SKIP LOCKED`,
    // $5 / $3: each row's attempt-log record (JSON text, NULL for none), appended by attempt_log_append().
    finish: `UPDATE ${work} w
      SET state = 'finished', result = u.result, finished_at = u.finished_at, oc_state = u.oc_state,
          oc_run_at = CASE WHEN u.oc_state = 'pending' THEN u.finished_at ELSE NULL END,
          worker_id = NULL, lease_until = NULL, attempt_log = ${s}.attempt_log_append(w.attempt_log, u.entry::jsonb)
      FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[]) AS u(id, result, finished_at, oc_state, entry)
      WHERE w.id = u.id`,
    reschedule: `WITH upd AS (
      UPDATE ${work} w SET state = 'pending', run_at = u.run_at, worker_id = NULL, lease_until = NULL,
        attempt_log = ${s}.attempt_log_append(w.attempt_log, u.entry::jsonb)
      FROM unnest($1::text[], $2::bigint[], $3::text[]) AS u(id, run_at, entry)
      WHERE w.id = u.id
      RETURNING w.pool)
    SELECT pg_notify($4::text, p.pool) FROM (SELECT DISTINCT pool FROM upd) p`,
    release: `WITH upd AS (
      UPDATE ${work} w SET state = 'pending', attempt = w.attempt - 1, run_at = $3::bigint, worker_id = NULL, lease_until = NULL
      FROM unnest($1::text[], $2::int[]) AS u(id, attempt)
      WHERE w.id = u.id AND w.attempt = u.attempt AND w.state = 'running'
      RETURNING w.pool)
    SELECT pg_notify($4::text, p.pool) FROM (SELECT DISTINCT pool FROM upd) p`,
    requestCancel: `UPDATE ${work} SET cancel_requested = TRUE WHERE id = ANY($1::text[])`,
    updateOnComplete: `UPDATE ${work} w
      SET oc_state = u.oc_state, oc_attempts = u.oc_attempts, oc_run_at = u.oc_run_at, oc_error = u.oc_error
      FROM unnest($1::text[], $2::text[], $3::int[], $4::bigint[], $5::text[]) AS u(id, oc_state, oc_attempts, oc_run_at, oc_error)
      WHERE w.id = u.id`,
  };
}

let savepointSeq = 0;

/** TxOps bound to `client`, which is inside BEGIN. */
export class PgTxOps implements TxOps<PoolClient> {
  private readonly sql: Statements<ReturnType<typeof txSql>>;

  constructor(
    readonly tx: PoolClient,
    private readonly schema: string,
    private readonly channel: string,
    private readonly claimKeys: ClaimKeys,
  ) {
    this.sql = statementsOf(schema, txSql);
  }

  async addStats(pool: string, d: PoolStats): Promise<void> {
    if (!d.completed && !d.succeeded && !d.failed && !d.retries && !d.canceled) return;
    await run(this.tx, statementsOf(this.schema, poolSql).addStats, [pool, d.completed, d.succeeded, d.failed, d.retries, d.canceled]);
  }

  /**
   * Claims inside this transaction (a completion batch claiming the slots it frees). The
   * pool row stays locked until this transaction commits, which follows at once.
   */
  claim(pool: string, opts: ClaimOptions): Promise<ClaimResult> {
    return claimOn(this.tx, this.schema, this.claimKeys, pool, opts);
  }

  async lockWork(pool: string, ids: readonly string[]): Promise<WorkRow[]> {
    if (!ids.length) return [];
    return (await run<PgWorkRow>(this.tx, this.sql.lockWork, [pool, ids])).rows.map(toWorkRow);
  }

  async lockExpired(pool: string, now: number, limit: number): Promise<WorkRow[]> {
    const rows = (await run<PgWorkRow>(this.tx, this.sql.lockExpired, [pool, now, limit])).rows.map(toWorkRow);
    // These attempts are about to leave `running` in this transaction (retry or finish),
    // freeing slots: wake the other workers when it commits.
    if (rows.length) await run(this.tx, NOTIFY, [this.channel, pool]);
    return rows;
  }

  async lockOnCompleteDue(pool: string, now: number, limit: number): Promise<WorkRow[]> {
    return (await run<PgWorkRow>(this.tx, this.sql.lockOnCompleteDue, [pool, now, limit])).rows.map(toWorkRow);
  }

  async finish(rows: readonly FinishWrite[]): Promise<void> {
    if (!rows.length) return;
    await run(this.tx, this.sql.finish, [
      rows.map((r) => r.id),
      rows.map((r) => r.result),
      rows.map((r) => r.finishedAt),
      rows.map((r) => r.ocState),
      rows.map((r) => r.attemptEntry ?? null),
    ]);
  }

  async reschedule(rows: readonly RescheduleWrite[]): Promise<void> {
    if (!rows.length) return;
    await run(this.tx, this.sql.reschedule, [
      rows.map((r) => r.id),
      rows.map((r) => r.runAt),
      rows.map((r) => r.attemptEntry ?? null),
      this.channel,
    ]);
  }

  async release(refs: readonly AttemptRef[], runAt: number): Promise<void> {
    if (!refs.length) return;
    await run(this.tx, this.sql.release, [refs.map((r) => r.id), refs.map((r) => r.attempt), runAt, this.channel]);
  }

  async requestCancel(ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    await run(this.tx, this.sql.requestCancel, [ids]);
  }

  async updateOnComplete(rows: readonly OnCompleteWrite[]): Promise<void> {
    if (!rows.length) return;
    await run(this.tx, this.sql.updateOnComplete, [
      rows.map((r) => r.id),
      rows.map((r) => r.ocState),
      rows.map((r) => r.ocAttempts),
      rows.map((r) => r.ocRunAt),
      rows.map((r) => r.ocError),
    ]);
  }

  /**
   * SAVEPOINT / RELEASE, or ROLLBACK TO on error. ROLLBACK TO also clears PostgreSQL's
   * "current transaction is aborted" state when the handler's own statement failed, so
   * the transaction stays usable for recording the failure.
   */
  async savepoint<T>(fn: () => Promise<T> | T): Promise<T> {
    const name = `workpool_sp_${++savepointSeq}`;
    await this.tx.query(`SAVEPOINT ${name}`);
    let result: T;
    try {
      result = await fn();
    } catch (e) {
      await this.tx.query(`ROLLBACK TO SAVEPOINT ${name}`);
      await this.tx.query(`RELEASE SAVEPOINT ${name}`);
      throw e;
    }
    await this.tx.query(`RELEASE SAVEPOINT ${name}`);
    return result;
  }
}
