/**
 * Mapping between PostgreSQL rows and the driver's types. node-postgres returns BIGINT
 * as a string (it may not fit a JS number); every BIGINT here is an epoch-ms time or a
 * counter well below 2^53, so Number() is exact.
 */
import type { ClaimAt, ClaimResult, NewWork, OnCompleteState, PoolConfig, PoolStats, WorkFields, WorkRow } from "../../driver/driver.js";
import type { LogLevel } from "../../events.js";
import type { RetryBehavior, WorkKind, WorkState } from "../../types.js";
import { byClaimOrder, newWorkValues } from "../../driver/work-values.js";

/** A BIGINT as node-postgres returns it. */
type BigIntText = string | number;

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

/** A row of the pools table. */
export interface PgPoolRow {
  max_parallelism: number;
  log_level: string;
  key_parallelism: number | null;
}

/** A row of summed stats. */
export interface PgStatsRow {
  completed: BigIntText;
  succeeded: BigIntText;
  failed: BigIntText;
  retries: BigIntText;
  canceled: BigIntText;
}

function num(v: BigIntText): number {
  return typeof v === "number" ? v : Number(v);
}

function numOrNull(v: BigIntText | null): number | null {
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

/** Which insert statement a batch of new work takes (see insertStatements in statements.ts). */
export type InsertForm = "one" | "shared" | "rows";

/** One row's values in the insert statements' column order ($1..$16). */
function columns(w: NewWork): unknown[] {
  return newWorkValues(w, retryText(w.retry));
}

/** Positions of id and args among the columns: the only ones a shared batch sends as arrays. */
const ID = 0;
const ARGS = 5;

/**
 * The insert statement for `rows` and its parameters ($1..$16, in column order): a single
 * row as scalars; rows that differ only in id and args (as one enqueue call makes them)
 * as two arrays and fourteen scalars; any other batch as one array per column (for unnest).
 */
export function insertParams(rows: readonly NewWork[]): { form: InsertForm; params: unknown[] } {
  const first = rows[0]!;
  if (rows.length === 1) return { form: "one", params: columns(first) };
  if (rows.every((r) => sharesColumns(r, first))) {
    const params = columns(first);
    params[ID] = rows.map((r) => r.id);
    params[ARGS] = rows.map((r) => r.args);
    return { form: "shared", params };
  }
  const perRow = rows.map(columns);
  return { form: "rows", params: perRow[0]!.map((_, i) => perRow.map((values) => values[i])) };
}

/** True if `a` and `b` agree on every column but id and args (retry by identity: one enqueue shares one object). */
function sharesColumns(a: NewWork, b: NewWork): boolean {
  return (
    a.pool === b.pool &&
    a.kind === b.kind &&
    a.fnName === b.fnName &&
    a.name === b.name &&
    a.runAt === b.runAt &&
    a.enqueuedAt === b.enqueuedAt &&
    a.retry === b.retry &&
    a.timeoutMs === b.timeoutMs &&
    a.onComplete === b.onComplete &&
    a.context === b.context &&
    a.priority === b.priority &&
    a.key === b.key &&
    a.meta === b.meta &&
    a.uniqueKey === b.uniqueKey
  );
}

function retryText(retry: RetryBehavior | null): string | null {
  return retry === null ? null : JSON.stringify(retry);
}

/** Converts a pool row. */
export function toPoolConfig(r: PgPoolRow): PoolConfig {
  return { maxParallelism: r.max_parallelism, logLevel: r.log_level as LogLevel, keyParallelism: r.key_parallelism };
}

/** Converts summed stats. */
export function toPoolStats(r: PgStatsRow | undefined): PoolStats {
  if (!r) return { completed: 0, succeeded: 0, failed: 0, retries: 0, canceled: 0 };
  return {
    completed: num(r.completed),
    succeeded: num(r.succeeded),
    failed: num(r.failed),
    retries: num(r.retries),
    canceled: num(r.canceled),
  };
}
