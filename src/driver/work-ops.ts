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
  /** The same as {@link WorkOps.claim}, inside this transaction: a batch of completions claims the slots it frees without a commit of its own. */
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
  /** Claims up to `opts.limit` due rows in claim order (priority, run_at, id), within the pool's maxParallelism and each key's keyParallelism, passing over keys at their limit. */
  claim(pool: string, opts: ClaimOptions): Promise<ClaimResult>;
  /** Writes action results of work without onComplete (fenced by attempt; a requested cancel wins), adds them to the counters and, given `claim`, claims for the freed slots: one transaction. */
  complete(pool: string, writes: readonly CompletionWrite[], now: number, claim: ClaimOptions | null): Promise<CompleteResult>;
  /** Deletes up to `limit` finished rows finished before `before` whose onComplete is settled. Returns how many. */
  deleteFinishedBefore(pool: string, before: number, limit: number): Promise<number>;
  /** Deletes the given rows of `pool` that are finished with their onComplete settled (none, done or failed); returns the ids deleted. */
  deleteFinishedIds(pool: string, ids: readonly string[]): Promise<string[]>;
  /** Extends this worker's leases to `lease.leaseMs` from the time read once the store is held; reports canceled and lost attempts. */
  heartbeat(pool: string, workerId: string, refs: readonly AttemptRef[], lease: LeaseRenewal): Promise<HeartbeatResult>;
  /** Optional, as only PostgreSQL saves a commit by it (SQLite's are cheap): inserts one row without uniqueKey and claims it in the same transaction if a slot is free, no other due work waits and its key has room; else null. */
  insertAndClaim?(row: NewWork, claim: ClaimOptions): Promise<WorkRow | null>;
  /** Inserts new rows (in `tx` when given) and resolves with the id each stands for: its own, or that of the pending work with its uniqueKey (kept or replaced per `onConflict`). */
  insertWork(rows: readonly NewWork[], tx?: Tx | TransactionExecutor): Promise<string[]>;
  /** Ids of unfinished work enqueued before `before`: pending ones, then running ones without a cancel request, each in id order, narrowed by `filter`. */
  listCancelable(pool: string, before: number, limit: number, filter?: CancelableFilter): Promise<string[]>;
  /** Reads rows (no lock) for status. Missing ids are simply absent. */
  readWork(pool: string, ids: readonly string[]): Promise<WorkRow[]>;
  /** Runs `fn` in one transaction; commits if it resolves, rolls back if it throws. */
  transaction<T>(fn: (ops: TxOps<Tx>) => Promise<T>): Promise<T>;
  /** Optional, as only PostgreSQL needs it (SQLite reuses its free pages): vacuums the work table once dead row versions pile up, run by the maintenance leader each tick; true if it did. */
  vacuum?(now: number): Promise<boolean>;
}
