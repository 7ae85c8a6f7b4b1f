/**
 * What the driver interface's claim, completion, heartbeat and in-transaction writes take
 * and return: attempt references (the fence of every write to running work), claim
 * parameters and results, and the finish, retry, completion and onComplete writes.
 */
import type { CompletionStatus } from "../events.js";
import type { OnCompleteState, PoolConfig, WorkRow } from "./work-rows.js";

/** Identifies one attempt: writes for it only apply while the row is still on it. */
export interface AttemptRef {
  id: string;
  attempt: number;
}

/**
 * Parameters of a claim. Its time is read from `clock` once the store is held (inside the
 * write transaction, or as the statement is sent on a held connection), never before
 * waiting for it: a claim that waited for a lock or a connection still starts its
 * attempts with full leases and counts rate-limit windows from when they start.
 */
export interface ClaimOptions {
  workerId: string;
  /** The pool's clock (epoch ms). */
  clock: () => number;
  /** Lease length written on the claimed rows, from the claim's time. */
  leaseMs: number;
  /** Most rows to claim (the pool's free slots may allow fewer). */
  limit: number;
}

/** A claim with its time read: what a driver writes on the rows it claims. */
export interface ClaimAt {
  workerId: string;
  /** The claim's time: the claimed rows' start. */
  now: number;
  /** Lease end written on the claimed rows. */
  leaseUntil: number;
  limit: number;
}

/** Reads a claim's time: call it once the store is held. */
export function claimAt(opts: ClaimOptions, now: number = opts.clock()): ClaimAt {
  return { workerId: opts.workerId, now, leaseUntil: now + opts.leaseMs, limit: opts.limit };
}

/** The claim's order: lowest priority first, then earliest run_at, then id. */
export function byClaimOrder(a: WorkRow, b: WorkRow): number {
  return a.priority - b.priority || a.runAt - b.runAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** What a claim returns. */
export interface ClaimResult {
  /** The claim's time, read once the store was held: the claimed attempts' start. */
  now: number;
  /** Rows now `running` for this worker, attempt already incremented. */
  claimed: WorkRow[];
  /** The pool's stored configuration as read inside the claim transaction. */
  config: PoolConfig;
  /** Running attempts of the pool after the claim (all processes). */
  running: number;
  /**
   * Earliest run_at of the pool's remaining pending work, or null if none. A driver may
   * also return null when the claim took every row it could (its limit, or the pool's
   * free slots): the worker then claims again before it would sleep.
   */
  nextRunAt: number | null;
}

/** A finish write: the row goes to `finished` with its result. */
export interface FinishWrite {
  id: string;
  /** JSON text of the RunResult. */
  result: string;
  finishedAt: number;
  ocState: OnCompleteState;
  /** JSON text of the ending attempt's record, appended to the row's attempt log; absent or null for none. */
  attemptEntry?: string | null;
}

/** A retry write: the row goes back to `pending`, due at `runAt`. */
export interface RescheduleWrite {
  id: string;
  runAt: number;
  /** JSON text of the failed attempt's record, appended to the row's attempt log; absent or null for none. */
  attemptEntry?: string | null;
}

/** One action attempt's outcome for {@link Driver.complete}, decided by the core from the row it claimed. */
export interface CompletionWrite {
  id: string;
  /** The attempt the outcome belongs to: the write applies only while the row is still on it. */
  attempt: number;
  /** How the attempt ended. A cancel requested while it ran turns any of these into `canceled`. */
  status: CompletionStatus;
  /** JSON text of the RunResult when the work finishes; null when it retries. */
  result: string | null;
  /** When the retry is due (status `retrying`); null otherwise. */
  runAt: number | null;
  /**
   * JSON text of the attempt's record for the row's attempt log (an attempt that threw),
   * or absent / null. Its `outcome` becomes `canceled` where a requested cancel wins.
   */
  attemptEntry?: string | null;
}

/** What {@link Driver.complete} did. */
export interface CompleteResult {
  /**
   * Ids whose write did not apply: their attempt was no longer the current one (rescued,
   * handed back). Nearly always none, so the list is of these rather than of the others.
   */
  stale: string[];
  /** Ids written that finished `canceled` because a cancel was requested while they ran. */
  canceled: string[];
  /** The claim for the freed slots; null when none was asked for or the pool has no stored config. */
  claim: ClaimResult | null;
}

/** onComplete bookkeeping for one row. */
export interface OnCompleteWrite {
  id: string;
  ocState: OnCompleteState;
  ocAttempts: number;
  ocRunAt: number | null;
  ocError: string | null;
}

/** What a heartbeat learns about this worker's running attempts. */
export interface HeartbeatResult {
  /** Attempts whose work was canceled: abort them. */
  cancelRequested: AttemptRef[];
  /**
   * Attempts no longer this worker's (lease lost and rescued, or released): abort them, their
   * results will be ignored. Each names its attempt: a newer attempt of the same work this
   * worker claimed since is not lost.
   */
  lost: AttemptRef[];
}

/** A heartbeat's lease: `leaseMs` from its time, read from `clock` once the store is held. */
export interface LeaseRenewal {
  clock: () => number;
  leaseMs: number;
}
