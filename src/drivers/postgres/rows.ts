/**
 * Mapping between PostgreSQL work rows and the driver's WorkRow. node-postgres returns
 * BIGINT as a string (it may not fit a JS number); every BIGINT here is an epoch-ms time or
 * a counter well below 2^53, so Number() is exact. The mappers are written out field by
 * field: a loop over the column list measured over ten times slower per row, and a claim
 * maps every row it takes (test/driver/contract/insert.ts checks that they carry every
 * column of the list).
 */
import { byClaimOrder, type ClaimAt, type ClaimResult, type OnCompleteState, type WorkFields, type WorkRow } from "../../driver/driver.js";
import { ROW_COLUMNS, STATE_COLUMNS } from "../../driver/work-columns.js";
import type { LogLevel } from "../../events.js";
import type { RetryBehavior, WorkKind, WorkState } from "../../types.js";

/** A BIGINT as node-postgres returns it. */
export type BigIntText = string | number;

/** The columns of a whole row, as its reads select them (toWorkRow reads them). */
export const WORK_SELECT = [...ROW_COLUMNS.map((c) => c.column), ...STATE_COLUMNS].join(", ");

/** A row of the work table as node-postgres returns it. */
export interface PgWorkRow {
  id: string;
  pool: string;
  kind: string;
  fn_name: string;
  name: string | null;
  args: string;
  state: string;
  run_at: BigIntText;
  enqueued_at: BigIntText;
  attempt: number;
  retry: string | null;
  timeout_ms: BigIntText | null;
  on_complete: string | null;
  context: string | null;
  cancel_requested: boolean;
  worker_id: string | null;
  lease_until: BigIntText | null;
  started_at: BigIntText | null;
  result: string | null;
  finished_at: BigIntText | null;
  oc_state: string;
  oc_attempts: number;
  oc_run_at: BigIntText | null;
  oc_error: string | null;
  priority: number;
  key: string | null;
  meta: string | null;
}

/** A BIGINT as a number. */
export function num(v: BigIntText): number {
  return typeof v === "number" ? v : Number(v);
}

/** A nullable BIGINT as a number or null. */
export function numOrNull(v: BigIntText | null): number | null {
  return v === null ? null : num(v);
}

/** Converts a stored work row. */
export function toWorkRow(r: PgWorkRow): WorkRow {
  return {
    id: r.id,
    pool: r.pool,
    kind: r.kind as WorkKind,
    fnName: r.fn_name,
    name: r.name,
    args: r.args,
    state: r.state as WorkState,
    runAt: num(r.run_at),
    enqueuedAt: num(r.enqueued_at),
    attempt: r.attempt,
    retry: r.retry === null ? null : (JSON.parse(r.retry) as RetryBehavior),
    timeoutMs: numOrNull(r.timeout_ms),
    onComplete: r.on_complete,
    context: r.context,
    cancelRequested: r.cancel_requested,
    workerId: r.worker_id,
    leaseUntil: numOrNull(r.lease_until),
    startedAt: numOrNull(r.started_at),
    result: r.result,
    finishedAt: numOrNull(r.finished_at),
    ocState: r.oc_state as OnCompleteState,
    ocAttempts: r.oc_attempts,
    ocRunAt: numOrNull(r.oc_run_at),
    ocError: r.oc_error,
    priority: r.priority,
    key: r.key,
    meta: r.meta,
  };
}

/**
 * A claimed row as claim() sends it: a JSON array of these columns, in this order.
 * BIGINTs arrive as JSON numbers.
 */
export type PgClaimedRow = [
  id: string,
  kind: string,
  fnName: string,
  name: string | null,
  args: string,
  runAt: number,
  enqueuedAt: number,
  attempt: number,
  retry: string | null,
  timeoutMs: number | null,
  onComplete: string | null,
  context: string | null,
  cancelRequested: boolean,
  priority: number,
  key: string | null,
  meta: string | null,
];

/**
 * A row of the claim() function: the pool's config (NULL when it has none), the running
 * count before the claim, the next run_at, and the claimed rows (NULL if none).
 */
export interface PgClaimRow {
  max_parallelism: number | null;
  log_level: string | null;
  key_parallelism: number | null;
  running_count: number | null;
  next_run_at: BigIntText | null;
  claimed: PgClaimedRow[] | null;
}

/**
 * `work` as a claim with `opts` leaves it: running on `attempt` for the claiming worker,
 * with no result and no onComplete delivery yet. The claim functions send only the
 * columns they do not know this way.
 */
export function claimedRow(work: WorkFields, attempt: number, cancelRequested: boolean, opts: ClaimAt): WorkRow {
  // Every field written out, not `...work`: a spread followed by more keys made V8 build
  // these objects through a slow path, and the drain at concurrency 100 ran at half speed.
  return {
    id: work.id,
    pool: work.pool,
    kind: work.kind,
    fnName: work.fnName,
    name: work.name,
    args: work.args,
    state: "running",
    runAt: work.runAt,
    enqueuedAt: work.enqueuedAt,
    attempt,
    retry: work.retry,
    timeoutMs: work.timeoutMs,
    onComplete: work.onComplete,
    context: work.context,
    cancelRequested,
    workerId: opts.workerId,
    leaseUntil: opts.leaseUntil,
    startedAt: opts.now,
    result: null,
    finishedAt: null,
    ocState: "none",
    ocAttempts: 0,
    ocRunAt: null,
    ocError: null,
    priority: work.priority,
    key: work.key,
    meta: work.meta,
  };
}

/** A row as claim() sends it, as a WorkRow. */
function fromClaimedTuple(r: PgClaimedRow, pool: string, opts: ClaimAt): WorkRow {
  const [
    id,
    kind,
    fnName,
    name,
    args,
    runAt,
    enqueuedAt,
    attempt,
    retry,
    timeoutMs,
    onComplete,
    context,
    cancelRequested,
    priority,
    key,
    meta,
  ] = r;
  const work: WorkFields = {
    id,
    pool,
    kind: kind as WorkKind,
    fnName,
    name,
    args,
    runAt,
    enqueuedAt,
    retry: retry === null ? null : (JSON.parse(retry) as RetryBehavior),
    timeoutMs,
    onComplete,
    context,
    priority,
    key,
    // Absent from a claim() of the previous release's schema during a rolling upgrade.
    meta: meta ?? null,
  };
  return claimedRow(work, attempt, cancelRequested, opts);
}

/** Converts a claim() row for a claim of `pool` with `opts`; null when the pool has no stored config. */
export function toClaimResult(r: PgClaimRow, pool: string, opts: ClaimAt): ClaimResult | null {
  if (r.max_parallelism === null || r.log_level === null) return null;
  const claimed = (r.claimed ?? []).map((c) => fromClaimedTuple(c, pool, opts)).sort(byClaimOrder);
  return {
    now: opts.now,
    claimed,
    config: { maxParallelism: r.max_parallelism, logLevel: r.log_level as LogLevel, keyParallelism: r.key_parallelism },
    running: (r.running_count ?? 0) + claimed.length,
    nextRunAt: numOrNull(r.next_run_at),
  };
}
