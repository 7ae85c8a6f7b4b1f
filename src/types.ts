/**
 * Public value types of workpool: ids, results, status and retry behaviour.
 * State names match docs/state-machine.md word for word.
 */

/** A work id, as returned by `enqueue*`. Opaque, time-sortable, 26 characters. */
export type WorkId = string;

/** The three live states of work; `finished` is the end state until retention deletes it. */
export type WorkState = "pending" | "running" | "finished";

/** Whether a unit of work is an action (side effects, retriable) or a mutation (one transaction). */
export type WorkKind = "action" | "mutation";

/** JSON values: what args, context and return values may contain. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The outcome of finished work, as passed to onComplete and shown by `status`. */
export type RunResult<R = unknown> = { kind: "success"; returnValue: R } | { kind: "failed"; error: string } | { kind: "canceled" };

/** How failed actions are retried. Delay before attempt n+1 = initialBackoffMs * base^(n-1) * jitter[0.5, 1.5). */
export interface RetryBehavior {
  /** Total attempts including the first; 1 means no retry. Integer >= 1. */
  maxAttempts: number;
  /** Delay before the first retry, in ms (before jitter). >= 0. */
  initialBackoffMs: number;
  /** Multiplier applied per further retry. >= 1. */
  base: number;
}

/** What an onComplete handler receives. */
export interface OnCompleteArgs<C = unknown, R = unknown> {
  /** The id of the work that finished. */
  workId: WorkId;
  /** The `context` given at enqueue (undefined if none). */
  context: C;
  /** How the work ended. */
  result: RunResult<R>;
}

/** Delivery state of a work's onComplete handler. */
export interface OnCompleteStatus {
  /** `pending`: not yet run (or waiting to retry); `done`: committed; `failed`: gave up after repeated errors. */
  state: "pending" | "done" | "failed";
  /** How many times it has been tried and rolled back. */
  failedAttempts: number;
  /** The last error it threw, if any. */
  error?: string;
}

/** What `status(id)` returns. */
export type Status<R = unknown> =
  | {
      state: "pending";
      previousAttempts: number;
      /** The work's priority, when not 0. */
      priority?: number;
      /** The work's key, when it has one. */
      key?: string;
    }
  | {
      state: "running";
      previousAttempts: number;
      /** The work's priority, when not 0. */
      priority?: number;
      /** The work's key, when it has one. */
      key?: string;
    }
  | {
      state: "finished";
      /** Present while the work is retained (see `retentionMs`). */
      result?: RunResult<R>;
      /** Present when the work has an onComplete handler and is retained. */
      onComplete?: OnCompleteStatus;
    };

/** A rate limit: at most `limit` attempts start in any window of `periodMs`, across every process. */
export interface RateLimit {
  /** Integer 1..1000000. */
  limit: number;
  /** Integer 1..2592000000 (30 days), ms. */
  periodMs: number;
}
