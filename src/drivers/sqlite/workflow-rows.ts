/** How SQLite's workflow rows (runs, journal entries) read as the driver's RunRow and StepRow. */
import type { RunRow, StepRow, StepState } from "../../driver/workflow-ops.js";

/** A run row as SQLite returns it. */
export interface SqliteRunRow {
  id: string;
  pool: string;
  name: string;
  args: string;
  state: RunRow["state"];
  generation: number;
  result: string | null;
  blocked: string | null;
  cancel_reason: RunRow["cancelReason"];
  on_complete: string | null;
  context: string | null;
  oc_state: RunRow["ocState"];
  oc_attempts: number;
  oc_error: string | null;
  parent_id: string | null;
  parent_step: number | null;
  steps: number;
  journal_bytes: number;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
  deadline: number | null;
  version: string | null;
  timeout_ms: number | null;
  pinned: number;
  parked_at: number | null;
  trace: string | null;
}

/** A journal row as SQLite returns it. */
export interface SqliteStepRow {
  run_id: string;
  n: number;
  kind: StepRow["kind"];
  name: string;
  state: StepState;
  args: string | null;
  outcome: string | null;
  work_id: string | null;
  child_id: string | null;
  delivered: number | null;
  started_at: number;
  finished_at: number | null;
}

/** A stored run as a RunRow. */
export function toRunRow(r: SqliteRunRow): RunRow {
  return {
    id: r.id,
    pool: r.pool,
    name: r.name,
    args: r.args,
    state: r.state,
    generation: r.generation,
    result: r.result,
    blocked: r.blocked,
    cancelReason: r.cancel_reason,
    onComplete: r.on_complete,
    context: r.context,
    ocState: r.oc_state,
    ocAttempts: r.oc_attempts,
    ocError: r.oc_error,
    parentId: r.parent_id,
    parentStep: r.parent_step,
    steps: r.steps,
    journalBytes: r.journal_bytes,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    finishedAt: r.finished_at,
    deadline: r.deadline,
    version: r.version,
    timeoutMs: r.timeout_ms,
    pinned: r.pinned === 1,
    parkedAt: r.parked_at,
    trace: r.trace,
  };
}

/** A stored journal entry as a StepRow. */
export function toStepRow(r: SqliteStepRow): StepRow {
  return {
    runId: r.run_id,
    n: r.n,
    kind: r.kind,
    name: r.name,
    state: r.state,
    args: r.args,
    outcome: r.outcome,
    workId: r.work_id,
    childId: r.child_id,
    delivered: r.delivered,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}
