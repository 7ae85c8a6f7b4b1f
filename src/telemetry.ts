/**
 * The tracing hooks a pool calls, for the `telemetry` option. `workpool/opentelemetry`
 * implements them with OpenTelemetry; another tracer can implement them too. A pool
 * without `telemetry` calls nothing and stores no trace context.
 */
import { InvalidArgumentError } from "./errors.js";
import type { WorkId, WorkKind } from "./types.js";

/** Trace context stored with work: string fields such as W3C `traceparent` and `tracestate`. */
export type TraceCarrier = Readonly<Record<string, string>>;

/** What an enqueue call is about. */
export interface EnqueueTraceInfo {
  pool: string;
  /** The handler's name. */
  handler: string;
  kind: WorkKind;
  /** How many works the call enqueues (1, or the batch's length). */
  count: number;
}

/** The span of one enqueue call. */
export interface EnqueueTrace {
  /**
   * The context stored with each work of the call, from which its attempts' spans
   * continue; undefined to store none. At most 8 fields of at most 512 characters.
   */
  readonly carrier: TraceCarrier | undefined;
  /** Ends the span: the ids written, or the error the write failed with. */
  end(result: { workIds: readonly WorkId[] } | { error: unknown }): void;
}

/** What one attempt (or onComplete delivery) is about. */
export interface AttemptTraceInfo {
  pool: string;
  workId: WorkId;
  handler: string;
  kind: WorkKind | "onComplete";
  /** The attempt's number (1-based); for onComplete, the attempt that finished the work. */
  attempt: number;
  /** The work's priority and key. */
  priority: number;
  key: string | null;
  /** When the work was enqueued, epoch ms. */
  enqueuedAt: number;
  /** The carrier its enqueue stored, if any. */
  carrier: TraceCarrier | undefined;
}

/** How an attempt ended, as its span records it. */
export type AttemptEnd =
  | { outcome: "success" }
  | {
      /** `retrying`: another attempt follows; `failed`: the work failed for good. */
      outcome: "failed" | "retrying";
      /** The error message as stored. */
      error: string;
      /** The thrown error's name (class), when it was an Error. */
      errorName?: string;
      /** Its stack, when it had one. */
      stack?: string;
    }
  | { outcome: "canceled" }
  /** The attempt was taken away from this worker (lease lost, shutdown): another will run the work. */
  | { outcome: "released" };

/** The span of one attempt. */
export interface AttemptTrace {
  /** Runs the handler inside the span, so that spans it makes are the attempt's children. */
  run<T>(fn: () => T): T;
  end(result: AttemptEnd): void;
}

/** The hooks a pool calls. Each call is guarded: a hook that throws is reported once and traces nothing more. */
export interface Telemetry {
  /** Starts the span of an enqueue call, before its rows are written. */
  enqueue(info: EnqueueTraceInfo): EnqueueTrace;
  /** Starts the span of an attempt, just before its handler runs. */
  attempt(info: AttemptTraceInfo): AttemptTrace;
  /** Starts the span of an onComplete delivery (optional). */
  onComplete?(info: AttemptTraceInfo): AttemptTrace;
}

/** Checks the `telemetry` option. */
export function checkTelemetry(value: unknown): Telemetry {
  const t = value as Partial<Record<keyof Telemetry, unknown>> | null;
  if (
    typeof t !== "object" ||
    t === null ||
    typeof t.enqueue !== "function" ||
    typeof t.attempt !== "function" ||
    (t.onComplete !== undefined && typeof t.onComplete !== "function")
  ) {
    throw new InvalidArgumentError(
      "telemetry",
      "must be an object with enqueue() and attempt() methods (and optionally onComplete()), such as openTelemetry() from workpool/opentelemetry",
    );
  }
  return value as Telemetry;
}
