/**
 * The operator's writes on workflow runs on PostgreSQL (see WorkflowOperatorOps in
 * driver/workflow-ops.ts): a fork's copy of a run, and the drop of one journal entry.
 * Each is a few named statements on the client it is given (inside the caller's transaction).
 */
import type { ForkRun, WorkflowOperatorOps } from "../../driver/workflow-ops.js";
import { run, type Queryable } from "./connection.js";
import { statementsOf } from "./statements.js";

/** The statements of the operator's writes. */
export function workflowOperatorSql(s: string) {
  const runs = `${s}.workflow_runs`;
  const steps = `${s}.workflow_steps`;
  const events = `${s}.workflow_events`;
  return {
    forkRun: `INSERT INTO ${runs} (id, pool, name, args, state, generation, oc_state, steps, journal_bytes, created_at, updated_at, deadline,
        version, timeout_ms, pinned)
      SELECT $1::text, pool, name, args, 'running', generation, 'none', $3::integer, $4::integer, $5::bigint, $5::bigint, $6::bigint,
        version, timeout_ms, pinned FROM ${runs} WHERE id = $2
      ON CONFLICT (id) DO NOTHING`,
    forkJournal: `WITH copied AS (
        INSERT INTO ${steps} (run_id, n, kind, name, state, args, outcome, work_id, child_id, delivered, started_at, finished_at)
        SELECT $1::text, n, kind, name, state, args, outcome, work_id, child_id, delivered, started_at, finished_at
        FROM ${steps} WHERE run_id = $2 AND n < $3)
      INSERT INTO ${events} (run_id, seq, name, payload, sent_at, consumed_step)
      SELECT $1::text, seq, name, payload, sent_at, CASE WHEN consumed_step < $3::integer THEN consumed_step END FROM ${events} WHERE run_id = $2`,
    // Two moves, so no row ever takes a number another still has (the key is checked row by row).
    dropStep: `WITH gone AS (DELETE FROM ${steps} WHERE run_id = $1 AND n = $2),
        released AS (UPDATE ${events} SET consumed_step = CASE WHEN consumed_step = $2 THEN NULL ELSE consumed_step - 1 END
          WHERE run_id = $1 AND consumed_step >= $2),
        children AS (UPDATE ${runs} SET parent_step = parent_step - 1 WHERE parent_id = $1 AND parent_step > $2)
      UPDATE ${steps} SET n = -n WHERE run_id = $1 AND n > $2`,
    unparkDown: `UPDATE ${steps} SET n = -n - 1 WHERE run_id = $1 AND n < 0`,
  };
}

/** The operator's writes of the store in `schema`, on `db` (a client inside BEGIN). */
export function pgWorkflowOperatorOps(db: Queryable, schema: string): WorkflowOperatorOps {
  const s = statementsOf(schema, workflowOperatorSql);
  return {
    forkRun: async (f: ForkRun) => {
      const inserted = (await run(db, s.forkRun, [f.id, f.sourceId, f.steps, f.journalBytes, f.now, f.deadline])).rowCount > 0;
      if (inserted) await run(db, s.forkJournal, [f.id, f.sourceId, f.from]);
      return inserted;
    },
    dropStep: async (runId, n) => {
      await run(db, s.dropStep, [runId, n]);
      await run(db, s.unparkDown, [runId]);
    },
  };
}
