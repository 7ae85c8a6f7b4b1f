/**
 * Workflow runs, journals and events on SQLite (see driver/workflow-ops.ts). Each operation
 * is one or two synchronous statements on the connection it is given: the caller holds it
 * (its own transaction, our transaction, or the connection's lock for a read).
 */
import type { Database } from "better-sqlite3";
import type { NewRun, RunRow, RunUpdate, WorkflowOps, WorkflowStoreOps } from "../../driver/workflow-ops.js";
import type { SqliteConnectionAccess } from "./connection/connection-access.js";
import { prepared } from "./statements.js";
import { toRunRow, toStepRow, type StoredRunRow, type StoredStepRow } from "../../driver/workflow-row-columns.js";
import { sqliteWorkflowOperatorOps } from "./workflow-operator.js";
import { sqliteWorkflowVersionOps, VERSION_READS } from "./workflow-versions.js";
import { sqliteWorkflowReads } from "./workflow-reads.js";

const RUN_COLUMNS = `id, pool, name, args, state, generation, result, blocked, cancel_reason, on_complete, context, oc_state,
  oc_attempts, oc_error, parent_id, parent_step, steps, journal_bytes, created_at, updated_at, finished_at, deadline, version, timeout_ms,
  pinned, parked_at, trace`;
const STEP_COLUMNS = "run_id, n, kind, name, state, args, outcome, work_id, child_id, delivered, started_at, finished_at";

/** The statements of workflow runs, journals and events. */
export const WORKFLOW_SQL = {
  insertRun: `INSERT INTO workpool_workflow_runs (id, pool, name, args, state, on_complete, context, oc_state, parent_id, parent_step,
    created_at, updated_at, deadline, version, timeout_ms, pinned, trace)
    VALUES (@id, @pool, @name, @args, 'running', @on_complete, @context, 'none', @parent_id, @parent_step, @now, @now, @deadline,
      @version, @timeout_ms, @pinned, @trace)
    ON CONFLICT (id) DO NOTHING`,
  readRun: `SELECT ${RUN_COLUMNS} FROM workpool_workflow_runs WHERE id = ?`,
  updateRun: `UPDATE workpool_workflow_runs SET generation = generation + 1, updated_at = @now,
    state = coalesce(@state, state),
    result = CASE WHEN @set_result THEN @result ELSE result END,
    blocked = CASE WHEN @set_blocked THEN @blocked ELSE blocked END,
    cancel_reason = CASE WHEN @set_reason THEN @cancel_reason ELSE cancel_reason END,
    oc_state = coalesce(@oc_state, oc_state),
    oc_attempts = coalesce(@oc_attempts, oc_attempts),
    oc_error = CASE WHEN @set_oc_error THEN @oc_error ELSE oc_error END,
    finished_at = CASE WHEN @set_finished THEN @finished_at ELSE finished_at END,
    deadline = CASE WHEN @set_deadline THEN @deadline ELSE deadline END,
    steps = steps + @add_steps, journal_bytes = journal_bytes + @add_bytes
    WHERE id = @id AND (@generation IS NULL OR generation = @generation)`,
  setTrace: `UPDATE workpool_workflow_runs SET trace = ? WHERE id = ?`,
  readSteps: `SELECT ${STEP_COLUMNS} FROM workpool_workflow_steps WHERE run_id = ? AND n >= ? ORDER BY n`,
  readUndelivered: `SELECT ${STEP_COLUMNS} FROM workpool_workflow_steps
    WHERE run_id = ? AND delivered IS NULL AND outcome IS NOT NULL AND kind <> 'value' ORDER BY n`,
  insertStep: `INSERT INTO workpool_workflow_steps (${STEP_COLUMNS})
    VALUES (@run_id, @n, @kind, @name, @state, @args, @outcome, @work_id, @child_id, @delivered, @started_at, @finished_at)`,
  endStep: `UPDATE workpool_workflow_steps SET state = @state, outcome = @outcome, finished_at = @now
    WHERE run_id = @run_id AND n = @n AND state IN ('running', 'waiting') AND (@work_id IS NULL OR work_id = @work_id OR child_id = @work_id)`,
  markDelivered: `UPDATE workpool_workflow_steps SET delivered = ? WHERE run_id = ? AND n IN (SELECT value FROM json_each(?))`,
  openSteps: `SELECT ${STEP_COLUMNS} FROM workpool_workflow_steps WHERE run_id = ? AND state IN ('running', 'waiting') ORDER BY n`,
  cancelOpen: `UPDATE workpool_workflow_steps SET state = 'canceled', outcome = ?, finished_at = ?
    WHERE run_id = ? AND state IN ('running', 'waiting')`,
  deleteFrom: `DELETE FROM workpool_workflow_steps WHERE run_id = ? AND n >= ?`,
  releaseEvents: `UPDATE workpool_workflow_events SET consumed_step = NULL WHERE run_id = ? AND consumed_step >= ?`,
  insertEvent: `INSERT INTO workpool_workflow_events (run_id, seq, name, payload, sent_at)
    VALUES (@run_id, (SELECT coalesce(max(seq), 0) + 1 FROM workpool_workflow_events WHERE run_id = @run_id), @name, @payload, @now)
    RETURNING seq`,
  oldestEvent: `SELECT seq, payload FROM workpool_workflow_events WHERE run_id = ? AND name = ? AND consumed_step IS NULL ORDER BY seq LIMIT 1`,
  consumeEvent: `UPDATE workpool_workflow_events SET consumed_step = ? WHERE run_id = ? AND seq = ?`,
  waitingFor: `SELECT min(n) AS n FROM workpool_workflow_steps WHERE run_id = ? AND kind = 'event' AND name = ? AND state = 'waiting'`,
  openChildren: `SELECT id FROM workpool_workflow_runs WHERE parent_id = ? AND state IN ('running', 'canceling', 'blocked') ORDER BY id`,
  finishedRuns: `SELECT r.id FROM workpool_workflow_runs r
    WHERE r.pool = ? AND r.finished_at <= ? AND r.state IN ('success', 'failed', 'canceled') AND r.oc_state <> 'pending'
      AND NOT EXISTS (SELECT 1 FROM workpool_workflow_runs p WHERE p.id = r.parent_id AND p.state IN ('running', 'canceling', 'blocked'))
    ORDER BY r.finished_at LIMIT ?`,
  deleteRunSteps: `DELETE FROM workpool_workflow_steps WHERE run_id IN (SELECT value FROM json_each(?))`,
  deleteRunEvents: `DELETE FROM workpool_workflow_events WHERE run_id IN (SELECT value FROM json_each(?))`,
  deleteRuns: `DELETE FROM workpool_workflow_runs WHERE id IN (SELECT value FROM json_each(?))`,
} as const;

/** The run update's statement parameters. */
function updateParams(id: string, generation: number | null, u: RunUpdate): Record<string, unknown> {
  return {
    id,
    generation,
    now: u.now,
    state: u.state ?? null,
    set_result: u.result !== undefined ? 1 : 0,
    result: u.result ?? null,
    set_blocked: u.blocked !== undefined ? 1 : 0,
    blocked: u.blocked ?? null,
    set_reason: u.cancelReason !== undefined ? 1 : 0,
    cancel_reason: u.cancelReason ?? null,
    oc_state: u.ocState ?? null,
    oc_attempts: u.ocAttempts ?? null,
    set_oc_error: u.ocError !== undefined ? 1 : 0,
    oc_error: u.ocError ?? null,
    set_finished: u.finishedAt !== undefined ? 1 : 0,
    finished_at: u.finishedAt ?? null,
    set_deadline: u.deadline !== undefined ? 1 : 0,
    deadline: u.deadline ?? null,
    add_steps: u.addSteps ?? 0,
    add_bytes: u.addBytes ?? 0,
  };
}

/** The workflow operations on `db`, which the caller holds (every call runs at once). */
export function sqliteWorkflowOps(db: Database): WorkflowOps {
  const s = prepared(db, WORKFLOW_SQL);
  const reads = sqliteWorkflowReads(db);
  const readRun = (id: string): RunRow | null => {
    const r = s.readRun.get(id) as StoredRunRow | undefined;
    return r ? toRunRow(r) : null;
  };
  return {
    ...reads,
    ...sqliteWorkflowVersionOps(db),
    insertRun: (run: NewRun) =>
      s.insertRun.run({
        id: run.id,
        pool: run.pool,
        name: run.name,
        args: run.args,
        on_complete: run.onComplete,
        context: run.context,
        parent_id: run.parentId,
        parent_step: run.parentStep,
        now: run.now,
        deadline: run.deadline,
        version: run.version,
        timeout_ms: run.timeoutMs,
        pinned: run.pinned ? 1 : 0,
        trace: run.trace ?? null,
      }).changes > 0,
    lockRun: readRun,
    readRun,
    advanceRun: (id, generation, update) => s.updateRun.run(updateParams(id, generation, update)).changes > 0,
    updateRun: (id, update) => void s.updateRun.run(updateParams(id, null, update)),
    setTrace: (id, trace) => void s.setTrace.run(trace, id),
    readSteps: (runId, from = 0) => (s.readSteps.all(runId, from) as StoredStepRow[]).map(toStepRow),
    readUndelivered: (runId) => (s.readUndelivered.all(runId) as StoredStepRow[]).map(toStepRow),
    insertSteps: (rows) => {
      for (const r of rows) {
        s.insertStep.run({
          run_id: r.runId,
          n: r.n,
          kind: r.kind,
          name: r.name,
          state: r.state,
          args: r.args,
          outcome: r.outcome,
          work_id: r.workId,
          child_id: r.childId,
          delivered: r.delivered,
          started_at: r.startedAt,
          finished_at: r.finishedAt,
        });
      }
    },
    endStep: (runId, n, state, outcome, now, workId) =>
      s.endStep.run({ state, outcome, now, run_id: runId, n, work_id: workId ?? null }).changes > 0,
    markDelivered: (runId, ns, generation) => {
      if (ns.length) s.markDelivered.run(generation, runId, JSON.stringify(ns));
    },
    cancelOpenSteps: (runId, outcome, now) => {
      const open = (s.openSteps.all(runId) as StoredStepRow[]).map(toStepRow);
      if (open.length) s.cancelOpen.run(outcome, now, runId);
      return open;
    },
    deleteFinishedRuns: (pool, before, limit) => {
      const ids = (s.finishedRuns.all(pool, before, limit) as { id: string }[]).map((r) => r.id);
      if (!ids.length) return 0;
      const list = JSON.stringify(ids);
      s.deleteRunSteps.run(list);
      s.deleteRunEvents.run(list);
      return s.deleteRuns.run(list).changes;
    },
    deleteStepsFrom: (runId, from) => {
      s.deleteFrom.run(runId, from);
      s.releaseEvents.run(runId, from);
    },
    insertEvent: (runId, name, payload, now) => (s.insertEvent.get({ run_id: runId, name, payload, now }) as { seq: number }).seq,
    takeEvent: (runId, name, n) => {
      const e = s.oldestEvent.get(runId, name) as { seq: number; payload: string } | undefined;
      if (!e) return null;
      s.consumeEvent.run(n, runId, e.seq);
      return e;
    },
    waitingFor: (runId, name) => (s.waitingFor.get(runId, name) as { n: number | null }).n,
    openChildren: (runId) => (s.openChildren.all(runId) as { id: string }[]).map((r) => r.id),
    ...sqliteWorkflowOperatorOps(db),
  };
}

/** The operations that only read. */
const READS = new Set<string>(["readRun", "lockRun", "readSteps", "readUndelivered", "waitingFor", "openChildren", ...VERSION_READS]);

/** Workflows on SQLite (the workflow noun of the driver interface). */
export class SqliteWorkflows implements WorkflowStoreOps<Database> {
  constructor(
    private readonly db: Database,
    private readonly access: SqliteConnectionAccess,
  ) {}

  workflows(tx?: Database): WorkflowOps {
    if (tx !== undefined || this.access.insideTx) return sqliteWorkflowOps(tx ?? this.db);
    // Outside a transaction: each call holds the connection; a read needs no write transaction.
    const raw = sqliteWorkflowOps(this.db);
    const held: Record<string, unknown> = {};
    for (const [name, fn] of Object.entries(raw) as [string, (...a: unknown[]) => unknown][]) {
      held[name] = READS.has(name)
        ? (...args: unknown[]) => this.access.read(() => fn(...args))
        : (...args: unknown[]) => this.access.write(() => fn(...args));
    }
    return held as unknown as WorkflowOps;
  }
}
