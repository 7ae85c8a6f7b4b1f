/**
 * The internal store interface. Every database lives behind it: the core (workpool.ts and
 * internal/) decides *what* happens to work, a driver only says *how* it is read and
 * written in its SQL. This interface is internal and may change freely between versions;
 * users see only {@link Store}.
 *
 * Rules every driver keeps (the conformance suite in test/conformance checks them):
 * - Times are epoch ms passed in as parameters; a driver never reads the wall clock for
 *   work decisions, so tests can use a manual clock.
 * - Each method is one transaction unless it says otherwise.
 * - `claim` enforces the pool's maxParallelism inside its own transaction, under a
 *   per-pool lock, counting rows in state `running` across all processes.
 * - Writes of running work are fenced by (id, attempt): an old attempt can't overwrite a
 *   newer state.
 */
import type { AdminOps } from "./admin-ops.js";
import type { AttemptOutputOps } from "./attempt-output-ops.js";
import type { RedriveOps } from "./redrive-ops.js";
import type { PoolOps } from "./pool-ops.js";
import type { RunningWorkers } from "./running-workers.js";
import type { ScheduleOps } from "./schedule-ops.js";
import type { WorkOps } from "./work-ops.js";
import type { WorkflowStoreOps } from "./workflow-ops.js";

// The nouns, rows and writes are part of this interface: code using a driver imports them from here.
export type { AdminOps } from "./admin-ops.js";
export type { AttemptOutputOps, AttemptOutputRow, AttemptOutputWrite } from "./attempt-output-ops.js";
export type { PoolLimitChange, PoolOps, RateLimits } from "./pool-ops.js";
export type { ScheduleOps } from "./schedule-ops.js";
export type { CancelableFilter, TxOps, WorkOps } from "./work-ops.js";
export type { WorkflowOps, WorkflowStoreOps } from "./workflow-ops.js";
export type { NewWork, OnCompleteState, OnConflict, PoolConfig, PoolCounts, PoolStats, WorkFields, WorkRow } from "./work-rows.js";
export type {
  AttemptRef,
  ClaimAt,
  ClaimOptions,
  ClaimResult,
  CompleteResult,
  CompletionWrite,
  FinishWrite,
  HeartbeatResult,
  LeaseRenewal,
  OnCompleteWrite,
  RescheduleWrite,
} from "./work-writes.js";
export { byClaimOrder, claimAt } from "./work-writes.js";

/**
 * The store interface every database driver implements, by noun: work rows
 * ({@link WorkOps}, `Tx` being its transaction handle), pools ({@link PoolOps}), schedules
 * ({@link ScheduleOps}), the admin API's reads ({@link AdminOps}), bulk retry
 * ({@link RedriveOps}) and attempt output ({@link AttemptOutputOps}); and, here, what
 * concerns the store as a whole.
 */
export interface Driver<Tx> extends WorkOps<Tx>, PoolOps, ScheduleOps, AdminOps, RedriveOps, WorkflowStoreOps<Tx>, AttemptOutputOps {
  /** Stops the workers still running on the store, then releases the connections the driver opened itself (not ones the caller passed in). */
  close(): Promise<void>;
  /** How many completion batches of one pool instance may be written at once: 1 where writes are serialized anyway (SQLite), 2 on a server, so process and server work at once. */
  readonly completionLanes: number;
  /** Short name of the database ("sqlite", "postgres"). */
  readonly dialect: string;
  /** Whether an error this driver threw is about reaching the database (the same write may succeed later) rather than about the data written, which the core isolates. */
  isTransientError(e: unknown): boolean;
  /** Creates or upgrades the schema; safe to call concurrently and repeatedly. */
  migrate(): Promise<void>;
  /** Suggested safety-poll interval for this store, ms. */
  readonly pollIntervalMs: number;
  /** Calls `onWake` when new work for `pool` may be ready (this process on SQLite, LISTEN/NOTIFY on PostgreSQL); returns an unsubscribe function. */
  subscribe(pool: string, onWake: () => void): () => void;
  /** True when `insertWork(rows, tx)` writes before it returns and throws synchronously (SQLite), so enqueue works inside the caller's synchronous transaction. */
  readonly synchronousTx: boolean;
  /** The workers started on this store; close() stops them first. */
  readonly workers: RunningWorkers;
}

/** Key under which a {@link Store} carries its driver. */
export const DRIVER = Symbol.for("workpool.driver");

/**
 * A store, as returned by `sqliteStore()` or `postgresStore()`: the thing you pass to
 * `new Workpool(store, ...)`. `Tx` is the transaction handle type of its database.
 */
export interface Store<Tx> {
  /** Short name of the database ("sqlite", "postgres"). */
  readonly dialect: string;
  /** Creates or upgrades the schema. Runs automatically on first use. */
  migrate(): Promise<void>;
  /**
   * Closes connections the store opened itself. A pool still running on the store is
   * stopped first as `stop({ timeoutMs: 0 })` does (its running attempts are handed back),
   * and a stop() in flight is waited for.
   */
  close(): Promise<void>;
  /** @internal The driver behind this store. */
  readonly [DRIVER]: Driver<Tx>;
}
