/**
 * Public types of {@link ActionRetrier}: run ids, results, status, handler contexts and
 * handles. Words follow the action-retrier vocabulary (`type`, `inProgress`, `completed`),
 * which differs on purpose from the pool's (`kind`, `pending`/`running`, `finished`).
 */
import type { EnqueueTiming } from "../call-options.js";
import type { LogLevel } from "../events.js";
import type { ActionHandle } from "../handlers.js";
import type { JsonValue, WorkId } from "../types.js";

/** Id of one run, as returned by `run`, `runAt` and `runAfter`. It is the underlying work id. */
export type RunId = WorkId;

/** How a run ended. */
export type RetrierRunResult<R = unknown> =
  | { type: "success"; returnValue: R }
  | {
      type: "failed";
      error: string;
      /** The JSON `data` of the WorkError (or NonRetryableError) the last attempt threw, when it had one. */
      errorData?: JsonValue;
    }
  | { type: "canceled" };

/** What `status(runId)` returns: still going (waiting, running or waiting to retry), or done. */
export type RunStatus<R = unknown> = { type: "inProgress" } | { type: "completed"; result: RetrierRunResult<R> };

/** What a retrier action receives besides its args. */
export interface RetrierActionCtx {
  /** The run this attempt belongs to. */
  runId: RunId;
  /** 1-based attempt number: 1 + the failures so far (a lost worker counts as a failure). */
  attempt: number;
  /** Aborted when the run is canceled, its lease is lost, or the worker shuts down. */
  signal: AbortSignal;
  /** The action's name. */
  name: string;
}

/** A retrier action: any async function. It may run more than once, so make it idempotent. */
export type RetrierActionFn<A, R> = (ctx: RetrierActionCtx, args: A) => R | Promise<R>;

/** What a retrier onComplete handler receives besides its args. */
export interface RetrierOnCompleteCtx<Tx> {
  /** The run that completed. */
  runId: RunId;
  /** The onComplete handler's name. */
  name: string;
  /** The open transaction: writes made with it commit together with the delivery record, exactly once. */
  tx: Tx;
}

/** The args of an onComplete handler: `C` is the run's context, `R` its action's return value (as on the pool). */
export interface RetrierOnCompleteArgs<C = unknown, R = unknown> {
  runId: RunId;
  /** The `context` given to `run` (undefined if none). */
  context: C;
  result: RetrierRunResult<R>;
}

/** An onComplete handler: a mutation run exactly once when a run completes. */
export type RetrierOnCompleteFn<Tx, C = unknown, R = unknown> = (
  ctx: RetrierOnCompleteCtx<Tx>,
  args: RetrierOnCompleteArgs<C, R>,
) => void | Promise<void>;

/** A defined retrier action, typed by its args and return value. */
export type RetrierActionHandle<A, R> = ActionHandle<A, R>;

declare const typeOfRetrierOnComplete: unique symbol;

/** A defined retrier onComplete handler, typed by the context and return value it accepts. */
export interface RetrierOnCompleteHandle<C = unknown, R = unknown> {
  readonly kind: "onComplete";
  readonly name: string;
  readonly pool: string;
  /** Type-only marker; never present at run time. A type error here means the onComplete does not accept this run's result or context. */
  readonly [typeOfRetrierOnComplete]?: (args: RetrierOnCompleteArgs<C, R>) => void;
}

/** A run's own backoff, overriding the retrier's options. */
export interface RunBackoffOptions {
  /** This run's `initialBackoffMs` (default: the retrier's). */
  initialBackoffMs?: number;
  /** This run's `base` (default: the retrier's). */
  base?: number;
  /** This run's `maxFailures` (default: the retrier's). */
  maxFailures?: number;
}

/** Options of `run`, `runAt` and `runAfter` apart from the start time: `context` only with `onComplete`. */
export type ScheduledRunOptions<Tx, C = unknown, R = unknown> = RunBackoffOptions & {
  /** The caller's open transaction: the run exists if and only if it commits. */
  tx?: Tx;
  /**
   * This run's log threshold (default: the retrier's `logLevel`): its events (started,
   * completed, retrying) are logged at or above it. `"ERROR"` keeps an expected failure quiet.
   */
  logLevel?: LogLevel;
} & (
    | {
        /** Mutation run exactly once when the run completes (success, final failure or cancel). */
        onComplete: RetrierOnCompleteHandle<C, R>;
        /** JSON passed to onComplete as `context`. */
        context?: NoInfer<C>;
      }
    | { onComplete?: undefined; context?: undefined }
  );

/** Options of `run`: `runAt` or `runAfter` (of the first attempt), not both. */
export type RunOptions<Tx, C = unknown, R = unknown> = ScheduledRunOptions<Tx, C, R> & EnqueueTiming;
