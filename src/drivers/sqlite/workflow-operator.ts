/**
 * The operator's writes on workflow runs on SQLite (see WorkflowOperatorOps in
 * driver/workflow-ops.ts): a fork's copy of a run, and the drop of one journal entry.
 * Each runs its statements on the connection it is given, which the caller holds.
 */
import type { Database } from "better-sqlite3";
import type { ForkRun, WorkflowOperatorOps } from "../../driver/workflow-ops.js";
import { prepared } from "./statements.js";

/** The statements of the operator's writes. */
export const WORKFLOW_OPERATOR_SQL = {
  forkRun: `INSERT INTO workpool_workflow_runs (id, pool, name, args, state, generation, oc_state, steps, journal_bytes,
      created_at, updated_at, deadline, version, timeout_ms, pinned)
    SELECT @id, pool, name, args, 'running', generation, 'none', @steps, @journal_bytes, @now, @now, @deadline, version, timeout_ms, pinned
    FROM workpool_workflow_runs WHERE id = @source_id
    ON CONFLICT (id) DO NOTHING`,
  forkSteps: `INSERT INTO workpool_workflow_steps (run_id, n, kind, name, state, args, outcome, work_id, child_id, delivered,
      started_at, finished_at)
    SELECT @id, n, kind, name, state, args, outcome, work_id, child_id, delivered, started_at, finished_at
    FROM workpool_workflow_steps WHERE run_id = @source_id AND n < @from`,
  forkEvents: `INSERT INTO workpool_workflow_events (run_id, seq, name, payload, sent_at, consumed_step)
    SELECT @id, seq, name, payload, sent_at, CASE WHEN consumed_step < @from THEN consumed_step END
    FROM workpool_workflow_events WHERE run_id = @source_id`,
  deleteStep: `DELETE FROM workpool_workflow_steps WHERE run_id = ? AND n = ?`,
  // Two moves, so no row ever takes a number another still has (the key is checked row by row).
  parkLater: `UPDATE workpool_workflow_steps SET n = -n WHERE run_id = ? AND n > ?`,
  unparkDown: `UPDATE workpool_workflow_steps SET n = -n - 1 WHERE run_id = ? AND n < 0`,
  releaseEvent: `UPDATE workpool_workflow_events SET consumed_step = NULL WHERE run_id = ? AND consumed_step = ?`,
  moveEvents: `UPDATE workpool_workflow_events SET consumed_step = consumed_step - 1 WHERE run_id = ? AND consumed_step > ?`,
  moveChildren: `UPDATE workpool_workflow_runs SET parent_step = parent_step - 1 WHERE parent_id = ? AND parent_step > ?`,
} as const;

/** The operator's writes on `db`, which the caller holds. */
export function sqliteWorkflowOperatorOps(db: Database): WorkflowOperatorOps {
  const s = prepared(db, WORKFLOW_OPERATOR_SQL);
  return {
    forkRun: (f: ForkRun) => {
      const params = { id: f.id, source_id: f.sourceId, from: f.from };
      const inserted =
        s.forkRun.run({ id: f.id, source_id: f.sourceId, steps: f.steps, journal_bytes: f.journalBytes, now: f.now, deadline: f.deadline })
          .changes > 0;
      if (!inserted) return false;
      s.forkSteps.run(params);
      s.forkEvents.run(params);
      return true;
    },
    dropStep: (runId, n) => {
      s.deleteStep.run(runId, n);
      s.parkLater.run(runId, n);
      s.unparkDown.run(runId);
      s.releaseEvent.run(runId, n);
      s.moveEvents.run(runId, n);
      s.moveChildren.run(runId, n);
    },
  };
}
