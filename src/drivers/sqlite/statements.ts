/**
 * Every SQL statement the SQLite driver runs, prepared once per connection.
 * Lists of ids travel as one JSON array parameter (json_each), so one prepared
 * statement serves any batch size.
 */
import type { Database, Statement } from "better-sqlite3";
import { columnList, REPLACED_SET, WORK_COLUMNS } from "../../driver/work-columns.js";
import { CLAIMED_COLUMNS } from "./rows.js";

/** attempt_log with the record `entry` (an SQL expression of JSON text) appended, keeping the last 10; unchanged when it is NULL. */
const appendAttempt = (entry: string): string => `CASE
      WHEN @entry IS NULL THEN attempt_log
      WHEN json_array_length(coalesce(attempt_log, '[]')) >= 10 THEN json_insert(json_remove(attempt_log, '$[0]'), '$[#]', json(${entry}))
      ELSE json_insert(coalesce(attempt_log, '[]'), '$[#]', json(${entry}))
    END`;

/** attempt_log with the record @entry (JSON text) appended, keeping the last 10; unchanged when @entry is NULL. */
const APPEND_ATTEMPT = appendAttempt("@entry");

/**
 * The insert of `rows` new rows, with positional parameters: each row's values are
 * newWorkValues() (WORK_COLUMNS order), bound as one array, not an object of named properties.
 */
export function insertSql(rows: number): string {
  const tuple = `(${WORK_COLUMNS.map(() => "?").join(", ")}, 'pending')`;
  return `INSERT INTO workpool_work (${columnList(WORK_COLUMNS)}, state) VALUES ${Array.from({ length: rows }, () => tuple).join(", ")}`;
}

/** The upsert on the unique index of pending unique keys. */
const ON_UNIQUE = "ON CONFLICT (pool, unique_key) WHERE state = 'pending' AND unique_key IS NOT NULL DO UPDATE SET";

const SQL = {
  insertWorkRow: insertSql(1),
  // A row with a unique key: pending work that has it is kept (a write of nothing, so that
  // RETURNING gives its id) or has its fields replaced; either way its id comes back.
  insertUniqueKeep: `${insertSql(1)} ${ON_UNIQUE} unique_key = excluded.unique_key RETURNING id`,
  // Replaced work is unparked: its key may have changed.
  insertUniqueReplace: `${insertSql(1)} ${ON_UNIQUE} ${REPLACED_SET}, parked = 0 RETURNING id`,
  readPool: `SELECT max_parallelism, log_level, key_parallelism FROM workpool_pools WHERE name = ?`,
  seedPool: `INSERT INTO workpool_pools (name, max_parallelism, log_level, key_parallelism) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
  // While the pool is paused, the limit a resume restores is set instead.
  setMaxParallelism: `UPDATE workpool_pools
    SET max_parallelism = CASE WHEN paused_from IS NULL THEN @n ELSE max_parallelism END,
        paused_from = CASE WHEN paused_from IS NULL THEN NULL ELSE @n END
    WHERE name = @pool`,
  setLogLevel: `UPDATE workpool_pools SET log_level = ? WHERE name = ?`,
  setKeyParallelism: `UPDATE workpool_pools SET key_parallelism = ? WHERE name = ?`,
  countRunning: `SELECT count(*) AS n FROM workpool_work WHERE pool = ? AND state = 'running'`,
  runningKeys: `SELECT key, count(*) AS n FROM workpool_work WHERE pool = ? AND state = 'running' AND key IS NOT NULL GROUP BY key`,

  // The claim walks due unparked work one priority at a time (see claim.ts).
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
  dueIn: `SELECT id, key FROM workpool_work
    WHERE pool = ? AND state = 'pending' AND parked = 0 AND priority = ? AND run_at <= ? ORDER BY run_at, id`,
  claimIds: `UPDATE workpool_work
    SET state = 'running', attempt = attempt + 1, worker_id = @worker, lease_until = @lease_until, started_at = @now, unique_key = NULL
    WHERE id IN (SELECT value FROM json_each(@ids))
    RETURNING ${CLAIMED_COLUMNS}`,
  park: `UPDATE workpool_work SET parked = 1 WHERE id IN (SELECT value FROM json_each(?))`,
  takeFreedKeys: `DELETE FROM workpool_freed_keys WHERE pool = ? RETURNING key`,
  unparkKey: `UPDATE workpool_work SET parked = 0 WHERE id IN (
    SELECT id FROM workpool_work WHERE pool = ? AND key = ? AND state = 'pending' AND parked = 1 ORDER BY priority, run_at, id LIMIT ?)`,
  unparkAll: `UPDATE workpool_work SET parked = 0 WHERE pool = ? AND state = 'pending' AND parked = 1`,
  nextRunAtIn: `SELECT min(run_at) AS t FROM workpool_work WHERE pool = ? AND state = 'pending' AND parked = 0 AND priority = ?`,
  heartbeatRead: `SELECT id, state, attempt, worker_id, cancel_requested FROM workpool_work
    WHERE pool = ? AND id IN (SELECT value FROM json_each(?))`,
  extendLease: `UPDATE workpool_work SET lease_until = ? WHERE id = ? AND attempt = ? AND state = 'running'`,
  readWork: `SELECT * FROM workpool_work WHERE pool = ? AND id IN (SELECT value FROM json_each(?))`,
  cancelablePending: `SELECT id FROM workpool_work
    WHERE pool = @pool AND state = 'pending' AND enqueued_at < @before AND (@fn IS NULL OR fn_name = @fn)
      AND (@key IS NULL OR key = @key) ORDER BY id LIMIT @limit`,
  cancelableRunning: `SELECT id FROM workpool_work
    WHERE pool = @pool AND state = 'running' AND cancel_requested = 0 AND enqueued_at < @before AND (@fn IS NULL OR fn_name = @fn)
      AND (@key IS NULL OR key = @key) ORDER BY id LIMIT @limit`,
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
  // complete(), for work without onComplete (its oc_state stays 'none'): each write fenced by
  // attempt in the UPDATE itself, none while a cancel is requested (completeCanceled writes
  // those). The first is a success without an attempt record.
  completeFinish: `UPDATE workpool_work
    SET state = 'finished', result = ?, finished_at = ?, worker_id = NULL, lease_until = NULL
    WHERE id = ? AND attempt = ? AND state = 'running' AND cancel_requested = 0`,
  completeFinishLogged: `UPDATE workpool_work
    SET state = 'finished', result = @result, finished_at = @now,
        worker_id = NULL, lease_until = NULL, attempt_log = ${APPEND_ATTEMPT}
    WHERE id = @id AND attempt = @attempt AND state = 'running' AND cancel_requested = 0`,
  completeRetry: `UPDATE workpool_work
    SET state = 'pending', run_at = @run_at, worker_id = NULL, lease_until = NULL, attempt_log = ${APPEND_ATTEMPT}
    WHERE id = @id AND attempt = @attempt AND state = 'running' AND cancel_requested = 0`,
  completeCanceled: `UPDATE workpool_work
    SET state = 'finished', result = '{"kind":"canceled"}', finished_at = @now,
        worker_id = NULL, lease_until = NULL, attempt_log = ${appendAttempt("json_set(@entry, '$.outcome', 'canceled')")}
    WHERE id = @id AND attempt = @attempt AND state = 'running' AND cancel_requested = 1`,
  release: `UPDATE workpool_work
    SET state = 'pending', attempt = attempt - 1, run_at = ?, worker_id = NULL, lease_until = NULL
    WHERE id = ? AND attempt = ? AND state = 'running'`,
  requestCancel: `UPDATE workpool_work SET cancel_requested = 1 WHERE id = ?`,
  updateOnComplete: `UPDATE workpool_work SET oc_state = @oc_state, oc_attempts = @oc_attempts, oc_run_at = @oc_run_at, oc_error = @oc_error
    WHERE id = @id`,
  addStats: `INSERT INTO workpool_stats (pool, completed, succeeded, failed, retries, canceled)
    VALUES (@pool, @completed, @succeeded, @failed, @retries, @canceled)
    ON CONFLICT (pool) DO UPDATE SET
      completed = completed + excluded.completed, succeeded = succeeded + excluded.succeeded,
      failed = failed + excluded.failed, retries = retries + excluded.retries, canceled = canceled + excluded.canceled`,
  readStats: `SELECT completed, succeeded, failed, retries, canceled FROM workpool_stats WHERE pool = ?`,
  acquireLeader: `INSERT INTO workpool_leaders (pool, worker_id, expires_at) VALUES (@pool, @worker, @expires_at)
    ON CONFLICT (pool) DO UPDATE SET worker_id = excluded.worker_id, expires_at = excluded.expires_at
    WHERE workpool_leaders.worker_id = excluded.worker_id OR workpool_leaders.expires_at < @now`,
  releaseLeader: `DELETE FROM workpool_leaders WHERE pool = ? AND worker_id = ?`,
  deleteFinishedBefore: `DELETE FROM workpool_work WHERE id IN (
    SELECT id FROM workpool_work
    WHERE pool = ? AND state = 'finished' AND finished_at < ? AND oc_state <> 'pending'
    ORDER BY finished_at LIMIT ?)`,
  deleteFinishedIds: `DELETE FROM workpool_work
    WHERE pool = ? AND id IN (SELECT value FROM json_each(?)) AND state = 'finished' AND oc_state <> 'pending'
    RETURNING id`,
  countPending: `SELECT count(*) AS n, coalesce(sum(run_at <= ?), 0) AS due FROM workpool_work WHERE pool = ? AND state = 'pending'`,
} as const;

/** The prepared statements of one connection, by name. */
export type Statements = { [K in keyof typeof SQL]: Statement };

const cache = new WeakMap<Database, Statements>();

/** Prepared statements for `db`, created on first use and cached for the connection's life. */
export function statementsFor(db: Database): Statements {
  let stmts = cache.get(db);
  if (!stmts) {
    const prepared: Partial<Record<keyof typeof SQL, Statement>> = {};
    for (const key of Object.keys(SQL) as (keyof typeof SQL)[]) prepared[key] = db.prepare(SQL[key]);
    stmts = prepared as Statements;
    cache.set(db, stmts);
  }
  return stmts;
}
