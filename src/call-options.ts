/**
 * The option types of Workpool's calls: enqueue (timing, onComplete, the rest), stop()
 * and cancelAll(). Exported from `workpool` through workpool.ts.
 */
import type { TransactionExecutor } from "./driver/tx-executor.js";
import type { OnCompleteHandle } from "./handlers.js";
import type { LogLevel } from "./events.js";
import type { ResultKind, RetryBehavior } from "./types.js";

/** When work may start: `runAt` or `runAfter`, not both. */
export type EnqueueTiming =
  | {
      /** Earliest start, epoch ms. Not with runAfter. */
      runAt?: number;
      runAfter?: undefined;
    }
  | {
      runAt?: undefined;
      /** Earliest start, ms from now. Not with runAt. */
      runAfter?: number;
    };

/** The onComplete of work and what it gets: `context` and `onCompleteExcludeKinds` only with `onComplete`. */
export type EnqueueCompletion<C, R, P extends string = string> =
  | {
      /** Mutation run exactly once when the work finishes; it must accept the work's result type. */
      onComplete: OnCompleteHandle<C, R, P>;
      /** JSON passed to onComplete as `context`. */
      context?: NoInfer<C>;
      /**
       * Result kinds for which onComplete is skipped (say `["success"]` to hear only of
       * failures and cancels). One or two of the three kinds; default none.
       */
      onCompleteExcludeKinds?: readonly ResultKind[];
    }
  | { onComplete?: undefined; context?: undefined; onCompleteExcludeKinds?: undefined };

/** Options of enqueueMutation, and those shared with enqueueAction. */
export type EnqueueOptions<Tx, C = unknown, R = unknown, P extends string = string> = EnqueueCommonOptions<Tx> &
  EnqueueTiming &
  EnqueueCompletion<C, R, P>;

/** Options shared by enqueueAction and enqueueMutation, apart from timing and onComplete. */
export interface EnqueueCommonOptions<Tx> {
  /** Display name for logs, events and `ctx.name` (default: the handler's name). */
  name?: string;
  /**
   * The log threshold of this work's events (`enqueued`, `started`, `completed`) in place
   * of the pool's `logLevel`: `"DEBUG"` to follow one work closely, `"ERROR"` to silence
   * an expected failure. Listeners get every event whatever the level.
   */
  logLevel?: LogLevel;
  /**
   * The caller's open transaction: the work exists if and only if it commits. The store's
   * own handle (`Tx`), or an ORM's transaction wrapped by an adapter (`workpool/drizzle`,
   * `workpool/kysely`, `workpool/knex`, `workpool/prisma`, or {@link transactionExecutor}).
   */
  tx?: Tx | TransactionExecutor;
  /** Claim order among due work of the pool: lower runs first. Integer -1000..1000. Default 0. */
  priority?: number;
  /**
   * 1-200 characters: at most the pool's `keyParallelism` attempts with the same key run
   * at once, across every process (a serial queue per user, tenant, document...).
   */
  key?: string;
  /**
   * 1-200 characters, unique among the pool's pending work (not yet started, including
   * work waiting for its runAt): an enqueue whose key pending work already has returns
   * that work's id, and keeps or replaces it per `onConflict`. Free again once the work starts.
   */
  uniqueKey?: string;
  /**
   * With `uniqueKey`: `"keep"` (default) leaves the pending work as it is; `"replace"`
   * replaces its args, runAt, priority, key, onComplete, context, onCompleteExcludeKinds
   * and logLevel (a debounce).
   */
  onConflict?: "keep" | "replace";
}

/** Options of enqueueAction only. */
export interface ActionOnlyOptions {
  /** true: the pool's default retry behaviour; false: no retry; or a behaviour. Default: `retryActionsByDefault`. */
  retry?: boolean | RetryBehavior;
  /** Abort and fail an attempt after this many ms (overrides `actionTimeoutMs`). */
  timeoutMs?: number;
}

/** Options of enqueueAction. */
export type ActionEnqueueOptions<Tx, C = unknown, R = unknown, P extends string = string> = EnqueueOptions<Tx, C, R, P> & ActionOnlyOptions;

/** Options of stop(). */
export interface StopOptions {
  /** How long to wait for running attempts before aborting and handing them back, ms. Default 30000. */
  timeoutMs?: number;
}

/** Options of cancelAll(). */
export interface CancelAllOptions {
  /** Cancel only work enqueued before this time (epoch ms). Default: now. */
  before?: number;
}
