/** How PostgreSQL's workflow rows (runs, journal entries) read as the driver's RunRow and StepRow. */
import type { RunRow, StepRow } from "../../driver/workflow-ops.js";

/** A run row as pg returns it (BIGINT columns read as float8 above). */
export type PgRunRow = {
  [K in keyof RunRow as K extends string ? SnakeCase<K> : never]: RunRow[K];
};
type SnakeCase<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeCase<T>}`
  : S;
export type PgStepRow = { [K in keyof StepRow as K extends string ? SnakeCase<K> : never]: StepRow[K] };

/** A stored run as a RunRow. */
export function toRunRow(r: PgRunRow): RunRow {
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
    journalBytes: Number(r.journal_bytes),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    finishedAt: r.finished_at,
    deadline: r.deadline,
    version: r.version,
    timeoutMs: r.timeout_ms,
    pinned: r.pinned,
    parkedAt: r.parked_at,
    trace: r.trace,
  };
}

/** A stored journal entry as a StepRow. */
export function toStepRow(r: PgStepRow): StepRow {
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
