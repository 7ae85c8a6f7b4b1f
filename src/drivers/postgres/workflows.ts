/**
 * Workflow runs, journals and events on PostgreSQL (see driver/workflow-ops.ts): one named
 * statement per operation, on the client of a transaction or on the store's connections.
 */
import type { PoolClient } from "pg";
import type { NewRun, RunUpdate, StepRow, WorkflowOps, WorkflowStoreOps } from "../../driver/workflow-ops.js";
import { run, type Queryable } from "./connection.js";
import type { PgConnections } from "./connection/connections.js";
import { statementsOf } from "./statements.js";
import { toRunRow, toStepRow, type StoredRunRow, type StoredStepRow } from "../../driver/workflow-row-columns.js";
import { pgWorkflowOperatorOps } from "./workflow-operator.js";
import { pgWorkflowVersionOps } from "./workflow-versions.js";
import { pgWorkflowReads } from "./workflow-reads.js";

const RUN_COLUMNS = `id, pool, name, args, state, generation, result, blocked, cancel_reason, on_complete, context, oc_state,
  oc_attempts, oc_error, parent_id, parent_step, steps, journal_bytes, created_at::float8 AS created_at,
  updated_at::float8 AS updated_at, finished_at::float8 AS finished_at, deadline::float8 AS deadline, version,
  timeout_ms::float8 AS timeout_ms, pinned, parked_at::float8 AS parked_at, trace`;
const STEP_COLUMNS = `run_id, n, kind, name, state, args, outcome, work_id, child_id, delivered, started_at::float8 AS started_at,
  finished_at::float8 AS finished_at`;

/** The statements of workflow runs, journals and events. */
export function workflowSql(s: string) {
  const runs = `${s}.workflow_runs`;
  const steps = `${s}.workflow_steps`;
  const events = `${s}.workflow_events`;
  return {
    insertRun: `INSERT INTO ${runs} (id, pool, name, args, state, on_complete, context, oc_state, parent_id, parent_step,
      created_at, updated_at, deadline, version, timeout_ms, pinned, trace)
      VALUES ($1, $2, $3, $4, 'running', $5, $6, 'none', $7, $8, $9, $9, $10, $11, $12, $13, $14) ON CONFLICT (id) DO NOTHING`,
    lockRun: `SELECT ${RUN_COLUMNS} FROM ${runs} WHERE id = $1 FOR UPDATE`,
    readRun: `SELECT ${RUN_COLUMNS} FROM ${runs} WHERE id = $1`,
    updateRun: `UPDATE ${runs} SET generation = generation + 1, updated_at = $2,
      state = coalesce($3, state),
      result = CASE WHEN $4 THEN $5 ELSE result END,
      blocked = CASE WHEN $6 THEN $7 ELSE blocked END,
      cancel_reason = CASE WHEN $8 THEN $9 ELSE cancel_reason END,
      oc_state = coalesce($10, oc_state),
      oc_attempts = coalesce($11, oc_attempts),
      oc_error = CASE WHEN $12 THEN $13 ELSE oc_error END,
      finished_at = CASE WHEN $14 THEN $15::bigint ELSE finished_at END,
      steps = steps + $16, journal_bytes = journal_bytes + $17,
      deadline = CASE WHEN $19 THEN $20::bigint ELSE deadline END
      WHERE id = $1 AND ($18::integer IS NULL OR generation = $18)`,
    setTrace: `UPDATE ${runs} SET trace = $2 WHERE id = $1`,
    readSteps: `SELECT ${STEP_COLUMNS} FROM ${steps} WHERE run_id = $1 AND n >= $2 ORDER BY n`,
    readUndelivered: `SELECT ${STEP_COLUMNS} FROM ${steps}
      WHERE run_id = $1 AND delivered IS NULL AND outcome IS NOT NULL AND kind <> 'value' ORDER BY n`,
    insertSteps: `INSERT INTO ${steps} (run_id, n, kind, name, state, args, outcome, work_id, child_id, delivered, started_at, finished_at)
      SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
        $9::text[], $10::integer[], $11::bigint[], $12::bigint[])`,
    endStep: `UPDATE ${steps} SET state = $3, outcome = $4, finished_at = $5
      WHERE run_id = $1 AND n = $2 AND state IN ('running', 'waiting') AND ($6::text IS NULL OR work_id = $6 OR child_id = $6)`,
    markDelivered: `UPDATE ${steps} SET delivered = $3 WHERE run_id = $1 AND n = ANY($2::integer[])`,
    cancelOpen: `WITH open AS (SELECT ${STEP_COLUMNS} FROM ${steps} WHERE run_id = $1 AND state IN ('running', 'waiting') FOR UPDATE),
      done AS (UPDATE ${steps} s SET state = 'canceled', outcome = $3, finished_at = $2
        FROM open WHERE s.run_id = open.run_id AND s.n = open.n)
      SELECT * FROM open ORDER BY n`,
    deleteFrom: `WITH d AS (DELETE FROM ${steps} WHERE run_id = $1 AND n >= $2)
      UPDATE ${events} SET consumed_step = NULL WHERE run_id = $1 AND consumed_step >= $2`,
    insertEvent: `INSERT INTO ${events} (run_id, seq, name, payload, sent_at)
      VALUES ($1, (SELECT coalesce(max(seq), 0) + 1 FROM ${events} WHERE run_id = $1), $2, $3, $4) RETURNING seq`,
    takeEvent: `UPDATE ${events} SET consumed_step = $3 WHERE (run_id, seq) = (
        SELECT run_id, seq FROM ${events} WHERE run_id = $1 AND name = $2 AND consumed_step IS NULL ORDER BY seq LIMIT 1 FOR UPDATE)
      RETURNING seq, payload`,
    waitingFor: `SELECT min(n) AS n FROM ${steps} WHERE run_id = $1 AND kind = 'event' AND name = $2 AND state = 'waiting'`,
    openChildren: `SELECT id FROM ${runs} WHERE parent_id = $1 AND state IN ('running', 'canceling', 'blocked') ORDER BY id`,
    // One statement, so a page of runs goes with its journals and events or not at all.
    deleteFinished: `WITH doomed AS (
        SELECT r.id FROM ${runs} r
        WHERE r.pool = $1 AND r.finished_at <= $2 AND r.state IN ('success', 'failed', 'canceled') AND r.oc_state <> 'pending'
          AND NOT EXISTS (SELECT 1 FROM ${runs} p WHERE p.id = r.parent_id AND p.state IN ('running', 'canceling', 'blocked'))
        ORDER BY r.finished_at LIMIT $3 FOR UPDATE OF r SKIP LOCKED),
      s AS (DELETE FROM ${steps} WHERE run_id IN (SELECT id FROM doomed)),
      e AS (DELETE FROM ${events} WHERE run_id IN (SELECT id FROM doomed))
      DELETE FROM ${runs} WHERE id IN (SELECT id FROM doomed)`,
  };
}

function updateValues(id: string, generation: number | null, u: RunUpdate): unknown[] {
  return [
    id,
    u.now,
    u.state ?? null,
    u.result !== undefined,
    u.result ?? null,
    u.blocked !== undefined,
    u.blocked ?? null,
    u.cancelReason !== undefined,
    u.cancelReason ?? null,
    u.ocState ?? null,
    u.ocAttempts ?? null,
    u.ocError !== undefined,
    u.ocError ?? null,
    u.finishedAt !== undefined,
    u.finishedAt ?? null,
    u.addSteps ?? 0,
    u.addBytes ?? 0,
    generation,
    u.deadline !== undefined,
    u.deadline ?? null,
  ];
}

/** The workflow operations of the store in `schema`, on `db` (a client inside BEGIN, or the store's connections). */
export function pgWorkflowOps(db: Queryable, schema: string): WorkflowOps {
  const s = statementsOf(schema, workflowSql);
  return {
    ...pgWorkflowReads(db, schema),
    ...pgWorkflowVersionOps(db, schema),
    insertRun: async (r: NewRun) =>
      (
        await run(db, s.insertRun, [
          r.id,
          r.pool,
          r.name,
          r.args,
          r.onComplete,
          r.context,
          r.parentId,
          r.parentStep,
          r.now,
          r.deadline,
          r.version,
          r.timeoutMs,
          r.pinned,
          r.trace ?? null,
        ])
      ).rowCount > 0,
    lockRun: async (id) => {
      const row = (await run<StoredRunRow>(db, s.lockRun, [id])).rows[0];
      return row ? toRunRow(row) : null;
    },
    readRun: async (id) => {
      const row = (await run<StoredRunRow>(db, s.readRun, [id])).rows[0];
      return row ? toRunRow(row) : null;
    },
    advanceRun: async (id, generation, update) => (await run(db, s.updateRun, updateValues(id, generation, update))).rowCount > 0,
    updateRun: async (id, update) => void (await run(db, s.updateRun, updateValues(id, null, update))),
    setTrace: async (id, trace) => void (await run(db, s.setTrace, [id, trace])),
    readSteps: async (runId, from = 0) => (await run<StoredStepRow>(db, s.readSteps, [runId, from])).rows.map(toStepRow),
    readUndelivered: async (runId) => (await run<StoredStepRow>(db, s.readUndelivered, [runId])).rows.map(toStepRow),
    insertSteps: async (rows) => {
      if (!rows.length) return;
      const col = <K extends keyof StepRow>(k: K) => rows.map((r) => r[k]);
      await run(db, s.insertSteps, [
        col("runId"),
        col("n"),
        col("kind"),
        col("name"),
        col("state"),
        col("args"),
        col("outcome"),
        col("workId"),
        col("childId"),
        col("delivered"),
        col("startedAt"),
        col("finishedAt"),
      ]);
    },
    endStep: async (runId, n, state, outcome, now, workId) =>
      (await run(db, s.endStep, [runId, n, state, outcome, now, workId ?? null])).rowCount > 0,
    markDelivered: async (runId, ns, generation) => {
      if (ns.length) await run(db, s.markDelivered, [runId, ns, generation]);
    },
    cancelOpenSteps: async (runId, outcome, now) => (await run<StoredStepRow>(db, s.cancelOpen, [runId, now, outcome])).rows.map(toStepRow),
    deleteFinishedRuns: async (pool, before, limit) => (await run(db, s.deleteFinished, [pool, before, limit])).rowCount,
    deleteStepsFrom: async (runId, from) => void (await run(db, s.deleteFrom, [runId, from])),
    insertEvent: async (runId, name, payload, now) =>
      (await run<{ seq: number }>(db, s.insertEvent, [runId, name, payload, now])).rows[0]!.seq,
    takeEvent: async (runId, name, n) => (await run<{ seq: number; payload: string }>(db, s.takeEvent, [runId, name, n])).rows[0] ?? null,
    waitingFor: async (runId, name) => (await run<{ n: number | null }>(db, s.waitingFor, [runId, name])).rows[0]?.n ?? null,
    openChildren: async (runId) => (await run<{ id: string }>(db, s.openChildren, [runId])).rows.map((r) => r.id),
    ...pgWorkflowOperatorOps(db, schema),
  };
}

/** Workflows on PostgreSQL (the workflow noun of the driver interface). */
export class PgWorkflows implements WorkflowStoreOps<PoolClient> {
  constructor(
    private readonly schema: string,
    private readonly conn: PgConnections,
  ) {}

  workflows(tx?: PoolClient): WorkflowOps {
    return pgWorkflowOps(tx ?? this.conn.app, this.schema);
  }
}
