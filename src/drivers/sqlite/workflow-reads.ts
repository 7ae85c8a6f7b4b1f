/**
 * The operator's reads of workflow runs on SQLite (the admin API's list, counts and events;
 * see driver/workflow-ops.ts WorkflowReadOps). Reads only, on the connection given.
 */
import type { Database } from "better-sqlite3";
import type { EventRow, RunCount, RunListRow, RunQuery, WorkflowReadOps } from "../../driver/workflow-ops.js";
import { prepared } from "./statements.js";
import { toRunRow } from "../../driver/workflow-row-columns.js";

const LIST_COLUMNS = `id, pool, name, '' AS args, state, generation, NULL AS result, blocked, cancel_reason, on_complete,
  NULL AS context, oc_state, oc_attempts, oc_error, parent_id, parent_step, steps, journal_bytes, created_at, updated_at,
  finished_at, deadline, version, timeout_ms, pinned, parked_at, NULL AS trace, substr(json_extract(result, '$.error'), 1, 1000) AS error`;

/** The statements of the operator's reads. */
export const WORKFLOW_READ_SQL = {
  listRuns: `SELECT ${LIST_COLUMNS} FROM workpool_workflow_runs
    WHERE (@pool IS NULL OR pool = @pool) AND (@name IS NULL OR name = @name)
      AND (@states IS NULL OR state IN (SELECT value FROM json_each(@states)))
      AND (@version IS NULL OR version = @version) AND (@parent_id IS NULL OR parent_id = @parent_id)
      AND (@created_after IS NULL OR created_at >= @created_after) AND (@created_before IS NULL OR created_at < @created_before)
      AND (@after_at IS NULL OR created_at < @after_at OR (created_at = @after_at AND id < @after_id))
    ORDER BY created_at DESC, id DESC LIMIT @limit`,
  countRuns: `SELECT pool, name, state, count(*) AS count FROM workpool_workflow_runs
    WHERE (@pool IS NULL OR pool = @pool) GROUP BY pool, name, state ORDER BY pool, name, state`,
  readEvents: `SELECT seq, name, payload, sent_at, consumed_step FROM workpool_workflow_events
    WHERE run_id = ? ORDER BY seq DESC LIMIT ?`,
} as const;

/** A listed run as a RunListRow (the columns a list leaves out are read as empty). */
function toListRow(r: Parameters<typeof toRunRow>[0] & { error: string | null }): RunListRow {
  const { args: _args, context: _context, result: _result, ...row } = toRunRow(r);
  return { ...row, error: r.error };
}

/** The operator's reads on `db`. */
export function sqliteWorkflowReads(db: Database): WorkflowReadOps {
  const s = prepared(db, WORKFLOW_READ_SQL);
  return {
    listRuns: (q: RunQuery) =>
      (
        s.listRuns.all({
          pool: q.pool,
          name: q.name,
          states: q.states === null ? null : JSON.stringify(q.states),
          version: q.version,
          parent_id: q.parentId,
          created_after: q.createdAfter,
          created_before: q.createdBefore,
          after_at: q.after?.createdAt ?? null,
          after_id: q.after?.id ?? null,
          limit: q.limit,
        }) as Parameters<typeof toListRow>[0][]
      ).map(toListRow),
    countRuns: (pool) => s.countRuns.all({ pool }) as RunCount[],
    readEvents: (runId, limit) =>
      (
        s.readEvents.all(runId, limit) as { seq: number; name: string; payload: string; sent_at: number; consumed_step: number | null }[]
      ).map((e): EventRow => ({ seq: e.seq, name: e.name, payload: e.payload, sentAt: e.sent_at, consumedStep: e.consumed_step })),
  };
}
