/**
 * The operator's reads of workflow runs on PostgreSQL (the admin API's list, counts and
 * events; see driver/workflow-ops.ts WorkflowReadOps). Reads only, on the connection given.
 */
import type { EventRow, RunCount, RunListRow, WorkflowReadOps } from "../../driver/workflow-ops.js";
import { run, type Queryable } from "./connection.js";
import { statementsOf } from "./statements.js";
import { toRunRow } from "../../driver/workflow-row-columns.js";

const LIST_COLUMNS = `id, pool, name, '' AS args, state, generation, NULL AS result, blocked, cancel_reason, on_complete,
  NULL AS context, oc_state, oc_attempts, oc_error, parent_id, parent_step, steps, journal_bytes, created_at::float8 AS created_at,
  updated_at::float8 AS updated_at, finished_at::float8 AS finished_at, deadline::float8 AS deadline, version,
  timeout_ms::float8 AS timeout_ms, pinned, parked_at::float8 AS parked_at, NULL AS trace, left(result::jsonb ->> 'error', 1000) AS error`;

/** The statements of the operator's reads. */
export function workflowReadSql(s: string) {
  return {
    listRuns: `SELECT ${LIST_COLUMNS} FROM ${s}.workflow_runs
      WHERE ($1::text IS NULL OR pool = $1) AND ($2::text IS NULL OR name = $2) AND ($3::text[] IS NULL OR state = ANY($3))
        AND ($4::text IS NULL OR version = $4) AND ($5::text IS NULL OR parent_id = $5)
        AND ($6::bigint IS NULL OR created_at >= $6) AND ($7::bigint IS NULL OR created_at < $7)
        AND ($8::bigint IS NULL OR (created_at, id) < ($8, $9::text))
      ORDER BY created_at DESC, id DESC LIMIT $10`,
    countRuns: `SELECT pool, name, state, count(*)::integer AS count FROM ${s}.workflow_runs
      WHERE ($1::text IS NULL OR pool = $1) GROUP BY pool, name, state ORDER BY pool, name, state`,
    readEvents: `SELECT seq, name, payload, sent_at::float8 AS sent_at, consumed_step FROM ${s}.workflow_events
      WHERE run_id = $1 ORDER BY seq DESC LIMIT $2`,
  };
}

/** The operator's reads of the store in `schema`, on `db`. */
export function pgWorkflowReads(db: Queryable, schema: string): WorkflowReadOps {
  const s = statementsOf(schema, workflowReadSql);
  return {
    listRuns: async (q) => {
      const rows = await run<Parameters<typeof toRunRow>[0] & { error: string | null }>(db, s.listRuns, [
        q.pool,
        q.name,
        q.states,
        q.version,
        q.parentId,
        q.createdAfter,
        q.createdBefore,
        q.after?.createdAt ?? null,
        q.after?.id ?? null,
        q.limit,
      ]);
      return rows.rows.map((r): RunListRow => {
        const { args: _args, context: _context, result: _result, ...row } = toRunRow(r);
        return { ...row, error: r.error };
      });
    },
    countRuns: async (pool) => (await run<RunCount>(db, s.countRuns, [pool])).rows,
    readEvents: async (runId, limit) =>
      (
        await run<{ seq: number; name: string; payload: string; sent_at: number; consumed_step: number | null }>(db, s.readEvents, [
          runId,
          limit,
        ])
      ).rows.map((e): EventRow => ({ seq: e.seq, name: e.name, payload: e.payload, sentAt: e.sent_at, consumedStep: e.consumed_step })),
  };
}
