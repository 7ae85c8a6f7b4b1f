/**
 * How both stores' workflow rows (runs, journal entries), read by column name, become the
 * driver's RunRow and StepRow.
 */
import type { RunRow, StepRow } from "./workflow-ops.js";

type SnakeCase<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeCase<T>}`
  : S;
type Columns<R> = { [K in keyof R as K extends string ? SnakeCase<K> : never]: R[K] };

/** A run row by column name: `pinned` is 0/1 on SQLite, `journal_bytes` may come as text from a BIGINT. */
export type StoredRunRow = Omit<Columns<RunRow>, "pinned" | "journal_bytes"> & { pinned: boolean | number; journal_bytes: number | string };

/** A journal row by column name. */
export type StoredStepRow = Columns<StepRow>;

/** A stored run as a RunRow. */
export function toRunRow(r: StoredRunRow): RunRow {
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
    pinned: r.pinned === true || r.pinned === 1,
    parkedAt: r.parked_at,
    trace: r.trace,
  };
}

/** A stored journal entry as a StepRow. */
export function toStepRow(r: StoredStepRow): StepRow {
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
