/**
 * The stored shapes the driver interface reads and writes: a pool's configuration and
 * counters, and a work row (as enqueue writes it and as a read returns it). Payloads are
 * JSON text the core has already validated; times are epoch ms.
 */
import type { LogLevel } from "../events.js";
import type { RetryBehavior, WorkKind, WorkState } from "../types.js";

/** Stored configuration of one pool, shared by every process using it. */
export interface PoolConfig {
  maxParallelism: number;
  logLevel: LogLevel;
  /** Most running attempts of one key, or null for no per-key limit. */
  keyParallelism: number | null;
}

/** Delivery state of onComplete: `none` when the work has no onComplete handler. */
export type OnCompleteState = "none" | "pending" | "done" | "failed";

/** The fields a row is enqueued with, as stored. Payloads are already-validated JSON text. */
export interface WorkFields {
  id: string;
  pool: string;
  kind: WorkKind;
  fnName: string;
  /** Display name from enqueue's `name` option. */
  name: string | null;
  args: string;
  runAt: number;
  enqueuedAt: number;
  /** Retry behaviour, or null for no retry. */
  retry: RetryBehavior | null;
  timeoutMs: number | null;
  /** Name of the onComplete handler, or null. */
  onComplete: string | null;
  /** JSON text of the onComplete context, or null. */
  context: string | null;
  /** Claim order among due work: lower first. Integer -1000..1000. */
  priority: number;
  /** The key whose running attempts the pool's keyParallelism limits, or null. */
  key: string | null;
  /**
   * JSON text of the work's runtime options and enqueue trace context (see
   * internal/work-meta.ts), or null when it has none.
   */
  meta: string | null;
}

/** What an enqueue with a unique key does when pending work of the pool already has it. */
export type OnConflict = "keep" | "replace";

/** A new row as enqueue writes it: a stored row's fields plus, maybe, a unique key. */
export interface NewWork extends WorkFields {
  /**
   * Unique among the pool's pending work, or null. A row with one is written alone (one
   * row per insertWork call).
   */
  uniqueKey: string | null;
  /** With a uniqueKey: keep the pending work that has it, or replace its fields. */
  onConflict: OnConflict;
}

/** A whole stored row. */
export interface WorkRow extends WorkFields {
  state: WorkState;
  /**
   * Attempts started so far. While running, the current attempt's number (1-based); it is
   * the fencing token of that attempt.
   */
  attempt: number;
  cancelRequested: boolean;
  workerId: string | null;
  leaseUntil: number | null;
  startedAt: number | null;
  /** JSON text of the RunResult once finished. */
  result: string | null;
  finishedAt: number | null;
  ocState: OnCompleteState;
  /** onComplete tries that threw and rolled back. */
  ocAttempts: number;
  /** When the next onComplete try is due (state pending). */
  ocRunAt: number | null;
  ocError: string | null;
}

/** Counters the periodic report is computed from; cumulative per pool. */
export interface PoolStats {
  completed: number;
  succeeded: number;
  failed: number;
  retries: number;
  canceled: number;
}

/** Counts for the periodic report and diagnostics. */
export interface PoolCounts {
  pending: number;
  running: number;
  /** Pending work due at `now` (waiting for a slot). */
  backlog: number;
}
