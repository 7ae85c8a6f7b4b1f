/**
 * The part of the driver interface about work rows: enqueue, claim, results, leases,
 * reads, transactions and retention. Internal like the rest of the interface; every time
 * is a parameter.
 */
import type { TransactionExecutor } from "./tx-executor.js";
import type { NewWork, PoolStats, WorkRow } from "./work-rows.js";
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

/** Filters of {@link WorkOps.listCancelable} beyond pool and time. */
export interface CancelableFilter {
  /** Only work of this handler. */
  fnName?: string;
  /** Only work of this key. */
  key?: string;
  /** Only pending work (never running work). */
  pendingOnly?: boolean;
}

/** Operations available inside {@link WorkOps.transaction}. All run in that one transaction. */
export interface TxOps<Tx> {
  /** Adds to the pool's cumulative report counters. */
  addStats(pool: string, delta: PoolStats): Promise<void>;
  /**
   * The same as {@link WorkOps.claim}, inside this transaction: a worker claims the slots a
   * batch of completions frees in the batch's own transaction, saving a commit per batch.
   */
  claim(pool: string, opts: ClaimOptions): Promise<ClaimResult>;
  /** Moves rows to `finished`. Callers have locked them and checked their state. */
  finish(rows: readonly FinishWrite[]): Promise<void>;
  /** Locks up to `limit` running rows whose lease ended before `now`. */
  lockExpired(pool: string, now: number, limit: number): Promise<WorkRow[]>;
  /** Locks up to `limit` finished rows whose onComplete is pending and due at `now`. */
  lockOnCompleteDue(pool: string, now: number, limit: number): Promise<WorkRow[]>;
  /** Reads and locks (FOR UPDATE where the database has it) the given rows of `pool`. */
  lockWork(pool: string, ids: readonly string[]): Promise<WorkRow[]>;
  /** Hands running attempts back unstarted: `pending`, attempt - 1, due at `runAt`; fenced. */
  release(refs: readonly AttemptRef[], runAt: number): Promise<void>;
  /** Marks running rows so their workers abort them and they finish `canceled`. */
  requestCancel(ids: readonly string[]): Promise<void>;
  /** Moves rows back to `pending` (attempt kept), clearing worker and lease. */
  reschedule(rows: readonly RescheduleWrite[]): Promise<void>;
  /** Runs `fn` in a savepoint: if it throws, only its writes roll back and the error is rethrown; the transaction stays usable. */
  savepoint<T>(fn: () => Promise<T> | T): Promise<T>;
  /** The raw transaction handle given to mutation and onComplete handlers as `ctx.tx`. */
  readonly tx: Tx;
  /** Writes onComplete bookkeeping. */
  updateOnComplete(rows: readonly OnCompleteWrite[]): Promise<void>;
}

/** The operations on work rows every driver implements (`Tx` is its transaction handle). */
export interface WorkOps<Tx> {
  /**
   * Claims up to `limit` due pending rows of `pool` for `workerId`, lowest priority first,
   * then earliest run_at, then id, never letting the pool's running count exceed its
   * stored maxParallelism nor the running attempts of one key exceed its keyParallelism.
   * Rows whose key is at its limit are skipped: the claim takes other due work instead.
   */
  claim(pool: string, opts: ClaimOptions): Promise<ClaimResult>;
  /**
   * The fast path for action results, one transaction and (on a server) one round trip:
   * writes `writes` for work without onComplete (fenced by attempt; a requested cancel wins
   * over the outcome), adds them to the report counters and, given `claim`, claims work for
   * the freed slots as {@link claim} does. The core uses it for batches that need no
   * handler inside the transaction, and {@link transaction} for the others.
   */
  complete(pool: string, writes: readonly CompletionWrite[], now: number, claim: ClaimOptions | null): Promise<CompleteResult>;
  /** Deletes up to `limit` finished rows finished before `before` whose onComplete is settled. Returns how many. */
  deleteFinishedBefore(pool: string, before: number, limit: number): Promise<number>;
  /** Deletes the given rows of `pool` if they are finished and their onComplete is settled (none, done or failed); returns the ids deleted. */
  deleteFinishedIds(pool: string, ids: readonly string[]): Promise<string[]>;
  /** Extends the lease of this worker's attempts to `lease.leaseMs` from the time read once the store is held; reports canceled and lost ones, each by attempt. */
  heartbeat(pool: string, workerId: string, refs: readonly AttemptRef[], lease: LeaseRenewal): Promise<HeartbeatResult>;
  /**
   * Optional, as only a server store gains by it (PostgreSQL): inserts one new row
   * (autocommit) and, in the same transaction, claims it for `claim.workerId` when the pool
   * has a free slot and no other due work is waiting (new work never jumps the queue);
   * otherwise leaves it pending and sends its wake-up as {@link insertWork} does. Returns
   * the row as claimed, or null. The core uses it when this process runs a worker of the
   * pool with room: the work then starts after one commit instead of two. Inside a
   * handler's transaction it only inserts (null). The row has no uniqueKey, and is claimed
   * only if its key (if any) is under the limit. On SQLite a commit is cheap, so enqueue and
   * claim stay two.
   */
  insertAndClaim?(row: NewWork, claim: ClaimOptions): Promise<WorkRow | null>;
  /**
   * Inserts new work; within `tx` (the caller's open transaction) when given. Resolves
   * with the id of the work each row stands for, in order: its own, or, for a row whose
   * uniqueKey pending work of the pool already has, that work's id (kept as it is, or
   * with its args, runAt, priority, key, onComplete and context replaced, per
   * `onConflict`; atomically, under the store's unique index on pending unique keys).
   */
  insertWork(rows: readonly NewWork[], tx?: Tx | TransactionExecutor): Promise<string[]>;
  /**
   * Ids of unfinished work enqueued before `before` that is pending, or running without a
   * cancel request (pending ones first, each in id order), narrowed by `filter`.
   */
  listCancelable(pool: string, before: number, limit: number, filter?: CancelableFilter): Promise<string[]>;
  /** Reads rows (no lock) for status. Missing ids are simply absent. */
  readWork(pool: string, ids: readonly string[]): Promise<WorkRow[]>;
  /** Runs `fn` in one transaction; commits if it resolves, rolls back if it throws. */
  transaction<T>(fn: (ops: TxOps<Tx>) => Promise<T>): Promise<T>;
  /**
   * Optional, as only a server store needs it (PostgreSQL: SQLite reuses its free pages):
   * upkeep the maintenance leader runs at the end of each tick, a vacuum of the work table
   * when dead row versions pile up faster than the server's own cleanup removes them.
   * Returns whether it vacuumed.
   */
  vacuum?(now: number): Promise<boolean>;
}
