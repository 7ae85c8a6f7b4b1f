/**
 * Public value types of workpool: ids, results, status and retry behaviour.
 * State names match docs/state-machine.md word for word.
 */

declare const workIdBrand: unique symbol;

/**
 * A work id, as returned by `enqueue*`: a string (time-sortable, 26 characters) branded so
 * that a plain string is not taken for one. Turn a stored or received id back into a
 * WorkId with `toWorkId(text)`, which checks its shape.
 */
export type WorkId = string & { readonly [workIdBrand]: "WorkId" };

/** The three live states of work; `finished` is the end state until retention deletes it. */
export type WorkState = "pending" | "running" | "finished";

/** Whether a unit of work is an action (side effects, retriable) or a mutation (one transaction). */
export type WorkKind = "action" | "mutation";

/** JSON values: what args, context and return values may contain. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * `T` itself when every value of it survives JSON, else `T` with the parts that do not
 * (functions, Dates and other class instances, bigint, symbol, undefined in arrays) made
 * `never`, so a handler typed with them fails to compile. Used as `A extends Json<A>`;
 * `unknown` and `any` pass (checked at run time only).
 */
export type Json<T> = JsonPart<T>;

/**
 * `unknown` when `A` is JSON (see {@link Json}); else an object type whose one property
 * names the mistake, which a handler function then fails to match.
 */
export type JsonArgsCheck<A> = [A] extends [Json<A>]
  ? unknown
  : { readonly "workpool: args must be JSON (no Date, class instance, function, bigint or undefined in arrays)": Json<A> };

/** Like {@link JsonArgsCheck}, for the context an onComplete handler accepts. */
export type JsonContextCheck<C> = [C] extends [Json<C>]
  ? unknown
  : { readonly "workpool: context must be JSON (no Date, class instance, function, bigint or undefined in arrays)": Json<C> };

// `unknown` and `any` (at any depth) pass: only types known to be wrong are refused.
type JsonPart<T> = 0 extends 1 & T
  ? T
  : unknown extends T
    ? T
    : T extends JsonValue // also ends the recursion over JsonValue itself
      ? T
      : T extends bigint | symbol | undefined | ((...args: never[]) => unknown)
        ? never
        : T extends readonly unknown[]
          ? { [K in keyof T]: JsonPart<T[K]> }
          : T extends object
            ? // Methods make class instances (Date, Map, Buffer...) fail; an undefined field is
              // simply absent in JSON, as an optional field is.
              { [K in keyof T]: undefined extends T[K] ? JsonPart<Exclude<T[K], undefined>> | undefined : JsonPart<T[K]> }
            : never;

/** The outcome of finished work, as passed to onComplete and shown by `status`. */
export type RunResult<R = unknown> =
  | { kind: "success"; returnValue: R }
  | {
      kind: "failed";
      error: string;
      /** The JSON `data` of the error the handler threw, when it had one (see `WorkError`). */
      errorData?: JsonValue;
    }
  | { kind: "canceled" };

/** How finished work ended: the `kind` of its {@link RunResult}. */
export type ResultKind = RunResult["kind"];

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
      /** The last progress the running attempt reported and its worker wrote (`ctx.reportProgress`), when it reported any. */
      progress?: number | { [key: string]: JsonValue };
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
