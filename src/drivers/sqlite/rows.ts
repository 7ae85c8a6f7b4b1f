/**
 * Mapping between SQLite work rows (snake_case, integers for booleans) and the driver's
 * WorkRow. The mappers are written out field by field: a loop over the column list
 * measured over ten times slower per row, and a claim maps every row it takes
 * (test/driver/contract/insert.ts checks that they carry every column of the list).
 */
import type { ClaimAt, WorkRow, OnCompleteState } from "../../driver/driver.js";
import { ROW_COLUMNS } from "../../driver/work-columns.js";
import type { RetryBehavior, WorkKind, WorkState } from "../../types.js";

/** A row of workpool_work as better-sqlite3 returns it. */
export interface SqliteWorkRow {
  id: string;
  pool: string;
  kind: string;
  fn_name: string;
  name: string | null;
  args: string;
  state: string;
  run_at: number;
  enqueued_at: number;
  attempt: number;
  retry: string | null;
  timeout_ms: number | null;
  on_complete: string | null;
  context: string | null;
  cancel_requested: number;
  worker_id: string | null;
  lease_until: number | null;
  started_at: number | null;
  result: string | null;
  finished_at: number | null;
  oc_state: string;
  oc_attempts: number;
  oc_run_at: number | null;
  oc_error: string | null;
  priority: number;
  key: string | null;
  unique_key: string | null;
  meta: string | null;
  parked: number;
}

/**
 * The columns a claim returns: the ones a worker needs that the claim did not write
 * itself (the rest of a claimed row follows from the claim, see toClaimedRow).
 */
export const CLAIMED_COLUMNS = [...ROW_COLUMNS.filter((c) => c.field !== "pool").map((c) => c.column), "attempt", "cancel_requested"].join(
  ", ",
);

/** A row as a claim returns it (CLAIMED_COLUMNS). */
export type SqliteClaimedRow = Omit<
  SqliteWorkRow,
  | "pool"
  | "state"
  | "worker_id"
  | "lease_until"
  | "started_at"
  | "result"
  | "finished_at"
  | "oc_state"
  | "oc_attempts"
  | "oc_run_at"
  | "oc_error"
  | "unique_key"
  | "parked"
>;

/** The last retry text parsed: rows enqueued together share it, and a claim takes them together. */
let lastRetry: { text: string; value: RetryBehavior } | null = null;

function parseRetry(text: string | null): RetryBehavior | null {
  if (text === null) return null;
  if (lastRetry?.text !== text) lastRetry = { text, value: JSON.parse(text) as RetryBehavior };
  // A copy: callers own the rows they get.
  return { ...lastRetry.value };
}

/**
 * A claimed row of `pool`: running for `opts.workerId` since `opts.now`, never finished
 * (so no result and no onComplete bookkeeping yet).
 */
export function toClaimedRow(r: SqliteClaimedRow, pool: string, opts: ClaimAt): WorkRow {
  return {
    id: r.id,
    pool,
    kind: r.kind as WorkKind,
    fnName: r.fn_name,
    name: r.name,
    args: r.args,
    state: "running",
    runAt: r.run_at,
    enqueuedAt: r.enqueued_at,
    attempt: r.attempt,
    retry: parseRetry(r.retry),
    timeoutMs: r.timeout_ms,
    onComplete: r.on_complete,
    context: r.context,
    cancelRequested: r.cancel_requested !== 0,
    workerId: opts.workerId,
    leaseUntil: opts.leaseUntil,
    startedAt: opts.now,
    result: null,
    finishedAt: null,
    ocState: "none",
    ocAttempts: 0,
    ocRunAt: null,
    ocError: null,
    priority: r.priority,
    key: r.key,
    meta: r.meta,
  };
}

/** Converts a stored row. */
export function toWorkRow(r: SqliteWorkRow): WorkRow {
  return {
    id: r.id,
    pool: r.pool,
    kind: r.kind as WorkKind,
    fnName: r.fn_name,
    name: r.name,
    args: r.args,
    state: r.state as WorkState,
    runAt: r.run_at,
    enqueuedAt: r.enqueued_at,
    attempt: r.attempt,
    retry: r.retry === null ? null : (JSON.parse(r.retry) as RetryBehavior),
    timeoutMs: r.timeout_ms,
    onComplete: r.on_complete,
    context: r.context,
    cancelRequested: r.cancel_requested !== 0,
    workerId: r.worker_id,
    leaseUntil: r.lease_until,
    startedAt: r.started_at,
    result: r.result,
    finishedAt: r.finished_at,
    ocState: r.oc_state as OnCompleteState,
    ocAttempts: r.oc_attempts,
    ocRunAt: r.oc_run_at,
    ocError: r.oc_error,
    priority: r.priority,
    key: r.key,
    meta: r.meta,
  };
}
