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
import type { AdminOps, CancelableFilter } from "./admin-ops.js";
import type { ScheduleOps } from "./schedule-ops.js";
import type { RunningWorkers } from "./running-workers.js";
import type { WorkflowOps } from "./workflow-ops.js";
import type { TransactionExecutor } from "./tx-executor.js";
import type { NewWork, PoolConfig, PoolCounts, PoolStats, WorkRow } from "./work-rows.js";
import type {
  AttemptRef,
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

// The row and write types are part of this interface: code using a driver imports them from here.
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
export { claimAt } from "./work-writes.js";

/** Operations available inside {@link Driver.transaction}. All run in that one transaction. */
export interface TxOps<Tx> {
  /** The raw transaction handle given to mutation and onComplete handlers as `ctx.tx`. */
  readonly tx: Tx;
  /**
   * Optional: the same as {@link Driver.claim}, inside this transaction. When present, a
   * worker claims the slots freed by a batch of completions in the batch's own
   * transaction, saving a commit per batch.
   */
  claim?(pool: string, opts: ClaimOptions): Promise<ClaimResult>;
  /** Reads and locks (FOR UPDATE where the database has it) the given rows of `pool`. */
  lockWork(pool: string, ids: readonly string[]): Promise<WorkRow[]>;
  /** Locks up to `limit` running rows whose lease ended before `now`. */
  lockExpired(pool: string, now: number, limit: number): Promise<WorkRow[]>;
  /** Locks up to `limit` finished rows whose onComplete is pending and due at `now`. */
  lockOnCompleteDue(pool: string, now: number, limit: number): Promise<WorkRow[]>;
  /** Moves rows to `finished`. Callers have locked them and checked their state. */
  finish(rows: readonly FinishWrite[]): Promise<void>;
  /** Moves rows back to `pending` (attempt kept), clearing worker and lease. */
  reschedule(rows: readonly RescheduleWrite[]): Promise<void>;
  /** Hands running attempts back unstarted: `pending`, attempt - 1, due at `runAt`; fenced. */
  release(refs: readonly AttemptRef[], runAt: number): Promise<void>;
  /** Marks running rows so their workers abort them and they finish `canceled`. */
  requestCancel(ids: readonly string[]): Promise<void>;
  /** Writes onComplete bookkeeping. */
  updateOnComplete(rows: readonly OnCompleteWrite[]): Promise<void>;
  /** Adds to the pool's cumulative report counters. */
  addStats(pool: string, delta: PoolStats): Promise<void>;
  /**
   * Runs `fn` in a savepoint: if it throws, only its writes roll back and the error is
   * rethrown; the transaction stays usable.
   */
  savepoint<T>(fn: () => Promise<T> | T): Promise<T>;
}

/**
 * The store interface every database driver implements. `Tx` is its transaction handle.
 * The operations behind the admin API are in {@link AdminOps}; schedules and rate limits in
 * {@link ScheduleOps}.
 */
export interface Driver<Tx> extends AdminOps, ScheduleOps {
  /** Short name of the database ("sqlite", "postgres"). */
  readonly dialect: string;
  /**
   * True when `insertWork(rows, tx)` writes before it returns and throws synchronously on
   * error (SQLite), so enqueue works inside the caller's synchronous transaction.
   */
  readonly synchronousTx: boolean;
  /**
   * Whether an error this driver threw is about reaching the database (connection lost,
   * server restarting, lock busy): the same write may succeed later. Any other error is
   * taken to be about the data written, which the core then isolates (see Completer).
   */
  isTransientError(e: unknown): boolean;
  /** Creates or upgrades the schema; safe to call concurrently and repeatedly. */
  migrate(): Promise<void>;
  /**
   * Stops the workers still running on the store (see {@link RunningWorkers}), then releases
   * connections the driver opened itself (not ones the caller passed in).
   */
  close(): Promise<void>;
  /** The workers started on this store; close() stops them first. */
  readonly workers: RunningWorkers;
  /**
   * Returns the pool's stored config, first inserting `seed` if the pool has none and
   * then applying `overrides` (fields the application set explicitly; a keyParallelism
   * of null removes the per-key limit). Raising or removing the per-key limit gives
   * every row the claim had set aside for its key's limit back to the claim.
   */
  ensurePool(pool: string, seed: PoolConfig, overrides: Partial<PoolConfig>): Promise<PoolConfig>;
  /** Reads the pool's stored config (null if the pool was never used). */
  readPoolConfig(pool: string): Promise<PoolConfig | null>;
  /**
   * Inserts new work; within `tx` (the caller's open transaction) when given. Resolves
   * with the id of the work each row stands for, in order: its own, or, for a row whose
   * uniqueKey pending work of the pool already has, that work's id (kept as it is, or
   * with its args, runAt, priority, key, onComplete and context replaced, per
   * `onConflict`; atomically, under the store's unique index on pending unique keys).
   */
  insertWork(rows: readonly NewWork[], tx?: Tx | TransactionExecutor): Promise<string[]>;
  /**
   * Optional: inserts one new row (autocommit) and, in the same transaction, claims it
   * for `claim.workerId` when the pool has a free slot and no other due work is waiting
   * (new work never jumps the queue); otherwise leaves it pending and sends its wake-up
   * as {@link insertWork} does. Returns the row as claimed, or null. The core uses it when
   * this process runs a worker of the pool with room: the work then starts after one
   * commit instead of two. Inside a handler's transaction it only inserts (null). The
   * row has no uniqueKey, and is claimed only if its key (if any) is under the limit.
   */
  insertAndClaim?(row: NewWork, claim: ClaimOptions): Promise<WorkRow | null>;
  /**
   * Claims up to `limit` due pending rows of `pool` for `workerId`, lowest priority first,
   * then earliest run_at, then id, never letting the pool's running count exceed its
   * stored maxParallelism nor the running attempts of one key exceed its keyParallelism.
   * Rows whose key is at its limit are skipped: the claim takes other due work instead.
   */
  claim(pool: string, opts: ClaimOptions): Promise<ClaimResult>;
  /**
   * Optional fast path for action results, one transaction and (on a server) one round
   * trip: writes `writes` for work without onComplete (fenced by attempt; a requested
   * cancel wins over the outcome), adds them to the report counters and, given `claim`,
   * claims work for the freed slots as {@link claim} does. The core uses it for batches
   * that need no handler inside the transaction; without it, it runs the same steps
   * through {@link transaction}.
   */
  complete?(pool: string, writes: readonly CompletionWrite[], now: number, claim: ClaimOptions | null): Promise<CompleteResult>;
  /**
   * Extends the lease of this worker's attempts to `lease.leaseMs` from the time read once the
   * store is held; reports canceled and lost ones, each by attempt.
   */
  heartbeat(pool: string, workerId: string, refs: readonly AttemptRef[], lease: LeaseRenewal): Promise<HeartbeatResult>;
  /** Reads rows (no lock) for status. Missing ids are simply absent. */
  readWork(pool: string, ids: readonly string[]): Promise<WorkRow[]>;
  /**
   * Ids of unfinished work enqueued before `before` that is pending, or running without a
   * cancel request (pending ones first, each in id order), narrowed by `filter`.
   */
  listCancelable(pool: string, before: number, limit: number, filter?: CancelableFilter): Promise<string[]>;
  /** Runs `fn` in one transaction; commits if it resolves, rolls back if it throws. */
  transaction<T>(fn: (ops: TxOps<Tx>) => Promise<T>): Promise<T>;
  /** Acquires or renews the pool's maintenance leadership until `now + ttlMs`; true if held. */
  acquireLeadership(pool: string, workerId: string, now: number, ttlMs: number): Promise<boolean>;
  /** Gives up leadership if held by `workerId`. */
  releaseLeadership(pool: string, workerId: string): Promise<void>;
  /** Deletes up to `limit` finished rows finished before `before` whose onComplete is settled. Returns how many. */
  deleteFinishedBefore(pool: string, before: number, limit: number): Promise<number>;
  /**
   * Deletes the given rows of `pool` if they are finished and their onComplete is settled
   * (none, done or failed). Returns the ids it deleted.
   */
  deleteFinishedIds(pool: string, ids: readonly string[]): Promise<string[]>;
  /** Cumulative report counters of the pool. */
  readStats(pool: string): Promise<PoolStats>;
  /** Pending, running and backlog counts of the pool at `now`. */
  counts(pool: string, now: number): Promise<PoolCounts>;
  /**
   * Calls `onWake` when new work for `pool` may be ready (same process for SQLite,
   * LISTEN/NOTIFY for PostgreSQL). Returns an unsubscribe function.
   */
  subscribe(pool: string, onWake: () => void): () => void;
  /**
   * Optional upkeep the maintenance leader runs at the end of each tick: a server store
   * vacuums its work table when dead row versions pile up faster than the server's own
   * cleanup removes them. Returns whether it vacuumed.
   */
  vacuum?(now: number): Promise<boolean>;
  /**
   * The workflow operations (see workflow-ops.ts) on `tx`, the raw handle of an open
   * transaction (ours or the caller's), or, without one, on the store's connection (reads).
   */
  workflows(tx?: Tx): WorkflowOps;
  /** Suggested safety-poll interval for this store, ms. */
  readonly pollIntervalMs: number;
  /**
   * How many completion batches of one pool instance may be written at once (default 1).
   * A server store says 2: while one batch is in the database, the results of the
   * attempts the other batch claimed are being produced, so the process and the server
   * work at the same time instead of taking turns.
   */
  readonly completionLanes?: number;
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
