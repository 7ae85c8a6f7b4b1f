/**
 * Attempt output on SQLite (AttemptOutputOps in the driver interface): each write is
 * fenced by the work row (still running on that attempt for that worker) and replaces the
 * attempt's stored record; all of a batch in one write transaction.
 */
import type { Database } from "better-sqlite3";
import {
  KEPT_ATTEMPT_OUTPUTS,
  type AttemptOutputOps,
  type AttemptOutputRow,
  type AttemptOutputWrite,
} from "../../driver/attempt-output-ops.js";
import type { AttemptRef, WorkRow } from "../../driver/driver.js";
import { toWorkRow, type SqliteWorkRow } from "./rows.js";
import type { SqliteConnectionAccess } from "./connection/connection-access.js";
import { prepared, type Prepared } from "./statements.js";

const SQL = {
  // Applies only while the work is running on this attempt for this worker.
  upsert: `INSERT INTO workpool_attempt_output (work_id, attempt, progress, progress_at, logs, logs_dropped, updated_at)
    SELECT w.id, w.attempt, @progress, @progressAt, @logs, @logsDropped, @now FROM workpool_work w
    WHERE w.id = @id AND w.pool = @pool AND w.attempt = @attempt AND w.state = 'running' AND w.worker_id = @workerId
    ON CONFLICT (work_id, attempt) DO UPDATE SET progress = excluded.progress, progress_at = excluded.progress_at,
      logs = excluded.logs, logs_dropped = excluded.logs_dropped, updated_at = excluded.updated_at`,
  prune: `DELETE FROM workpool_attempt_output WHERE work_id = ? AND attempt <= ?`,
  read: `SELECT work_id, attempt, progress, progress_at, logs, logs_dropped, updated_at FROM workpool_attempt_output
    WHERE work_id IN (SELECT value FROM json_each(?)) ORDER BY work_id, attempt`,
  workWithProgress: `SELECT w.*, CASE WHEN w.state = 'running' THEN (SELECT o.progress FROM workpool_attempt_output o
      WHERE o.work_id = w.id AND o.attempt = w.attempt) END AS progress_now
    FROM workpool_work w WHERE w.pool = ? AND w.id IN (SELECT value FROM json_each(?))`,
} as const;

interface OutputRow {
  work_id: string;
  attempt: number;
  progress: string | null;
  progress_at: number | null;
  logs: string | null;
  logs_dropped: number;
  updated_at: number;
}

/** The attempt output operations of the SQLite driver. */
export class SqliteAttemptOutput implements AttemptOutputOps {
  private readonly sql: Prepared<typeof SQL>;

  constructor(
    db: Database,
    private readonly access: SqliteConnectionAccess,
  ) {
    this.sql = prepared(db, SQL);
  }

  writeAttemptOutput(pool: string, workerId: string, writes: readonly AttemptOutputWrite[], now: number): Promise<AttemptRef[]> {
    return this.access.write(() => {
      const stale: AttemptRef[] = [];
      for (const w of writes) {
        const applied = this.sql.upsert.run({ ...w, pool, workerId, now }).changes > 0;
        if (!applied) stale.push({ id: w.id, attempt: w.attempt });
        else if (w.attempt > KEPT_ATTEMPT_OUTPUTS) this.sql.prune.run(w.id, w.attempt - KEPT_ATTEMPT_OUTPUTS);
      }
      return stale;
    });
  }

  readWorkWithProgress(pool: string, ids: readonly string[]): Promise<{ row: WorkRow; progress: string | null }[]> {
    return this.access.read(() =>
      (this.sql.workWithProgress.all(pool, JSON.stringify(ids)) as (SqliteWorkRow & { progress_now: string | null })[]).map((r) => ({
        row: toWorkRow(r),
        progress: r.progress_now,
      })),
    );
  }

  readAttemptOutput(ids: readonly string[]): Promise<AttemptOutputRow[]> {
    return this.access.read(() =>
      (this.sql.read.all(JSON.stringify(ids)) as OutputRow[]).map((r) => ({
        id: r.work_id,
        attempt: r.attempt,
        progress: r.progress,
        progressAt: r.progress_at,
        logs: r.logs,
        logsDropped: r.logs_dropped,
        updatedAt: r.updated_at,
      })),
    );
  }
}
