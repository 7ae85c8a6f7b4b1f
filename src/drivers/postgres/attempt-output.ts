/**
 * Attempt output on PostgreSQL (AttemptOutputOps in the driver interface): a batch of
 * writes is one statement, each write fenced by its work row (still running on that
 * attempt for that worker) and replacing the attempt's stored record.
 */
import {
  KEPT_ATTEMPT_OUTPUTS,
  type AttemptOutputOps,
  type AttemptOutputRow,
  type AttemptOutputWrite,
} from "../../driver/attempt-output-ops.js";
import type { AttemptRef, WorkRow } from "../../driver/driver.js";
import { run } from "./connection.js";
import type { PgConnections } from "./connection/connections.js";
import { numOrNull, toWorkRow, WORK_SELECT, type PgWorkRow } from "./rows.js";
import { statementsOf, type Statements } from "./statements.js";

function outputSql(s: string) {
  const out = `${s}.attempt_output`;
  return {
    // $1 pool, $2 worker, $3 now, $4 the writes as a JSON array; returns the writes that applied.
    write: `WITH w AS (
      SELECT * FROM jsonb_to_recordset($4::jsonb)
        AS x(id text, attempt int, progress text, "progressAt" bigint, logs text, "logsDropped" int)
    ), fenced AS (
      SELECT w.* FROM w JOIN ${s}.work k ON k.id = w.id AND k.attempt = w.attempt
      WHERE k.pool = $1::text AND k.state = 'running' AND k.worker_id = $2::text
    ), pruned AS (
      DELETE FROM ${out} o USING fenced f WHERE o.work_id = f.id AND o.attempt <= f.attempt - ${KEPT_ATTEMPT_OUTPUTS}
    )
    INSERT INTO ${out} AS o (work_id, attempt, progress, progress_at, logs, logs_dropped, updated_at)
    SELECT id, attempt, progress, "progressAt", logs, "logsDropped", $3::bigint FROM fenced
    ON CONFLICT (work_id, attempt) DO UPDATE SET progress = excluded.progress, progress_at = excluded.progress_at,
      logs = excluded.logs, logs_dropped = excluded.logs_dropped, updated_at = excluded.updated_at
    RETURNING o.work_id AS id, o.attempt`,
    read: `SELECT work_id, attempt, progress, progress_at, logs, logs_dropped, updated_at FROM ${out}
      WHERE work_id = ANY($1::text[]) ORDER BY work_id, attempt`,
    workWithProgress: `SELECT ${WORK_SELECT}, CASE WHEN state = 'running' THEN (SELECT o.progress FROM ${out} o
        WHERE o.work_id = w.id AND o.attempt = w.attempt) END AS progress_now
      FROM ${s}.work w WHERE pool = $1::text AND id = ANY($2::text[])`,
  };
}

interface OutputRow {
  work_id: string;
  attempt: number;
  progress: string | null;
  progress_at: string | null;
  logs: string | null;
  logs_dropped: number;
  updated_at: string;
}

/** The attempt output operations of the PostgreSQL driver. */
export class PgAttemptOutput implements AttemptOutputOps {
  private readonly sql: Statements<ReturnType<typeof outputSql>>;

  constructor(
    schema: string,
    private readonly conn: PgConnections,
  ) {
    this.sql = statementsOf(schema, outputSql);
  }

  async writeAttemptOutput(pool: string, workerId: string, writes: readonly AttemptOutputWrite[], now: number): Promise<AttemptRef[]> {
    if (!writes.length) return [];
    const { rows } = await run<{ id: string; attempt: number }>(this.conn.db, this.sql.write, [
      pool,
      workerId,
      now,
      JSON.stringify(writes),
    ]);
    const applied = new Set(rows.map((r) => `${r.id}/${r.attempt}`));
    return writes.filter((w) => !applied.has(`${w.id}/${w.attempt}`)).map((w) => ({ id: w.id, attempt: w.attempt }));
  }

  async readWorkWithProgress(pool: string, ids: readonly string[]): Promise<{ row: WorkRow; progress: string | null }[]> {
    if (!ids.length) return [];
    const { rows } = await run<PgWorkRow & { progress_now: string | null }>(this.conn.app, this.sql.workWithProgress, [pool, ids]);
    return rows.map((r) => ({ row: toWorkRow(r), progress: r.progress_now }));
  }

  async readAttemptOutput(ids: readonly string[]): Promise<AttemptOutputRow[]> {
    if (!ids.length) return [];
    const { rows } = await run<OutputRow>(this.conn.app, this.sql.read, [ids]);
    return rows.map((r) => ({
      id: r.work_id,
      attempt: r.attempt,
      progress: r.progress,
      progressAt: numOrNull(r.progress_at),
      logs: r.logs,
      logsDropped: r.logs_dropped,
      updatedAt: Number(r.updated_at),
    }));
  }
}
