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

/** What a workflow run is, for its spans. */
export interface WorkflowTraceInfo {
  pool: string;
  workflowId: string;
  /** The workflow's name. */
  workflow: string;
}

/** The root span of a run, started by start() or a runWorkflow step. */
export interface WorkflowStartTrace {
  /** The context stored with the run: its advances and steps continue its trace. Undefined to store none. */
  readonly carrier: TraceCarrier | undefined;
  /** Runs the run's first writes inside the span (its first advance is enqueued there). */
  run<T>(fn: () => T): T;
  /** Ends the span; `error` when the start failed. */
  end(error?: unknown): void;
}

/** What one advance of a run is about. */
export interface WorkflowAdvanceTraceInfo extends WorkflowTraceInfo {
  /** `replayed`: the function ran again from the start; `resumed`, `continued`: it went on in memory (in an advance, or where its step's work finished). */
  mode: "replayed" | "resumed" | "continued";
  /** The run's stored context (its root span's), if it has one. */
  run: TraceCarrier | undefined;
  /** The context of the run's last advance that committed, if stored. */
  previous: TraceCarrier | undefined;
}

/** How an advance ended: what it wrote, or nothing (`fenced`: another writer moved the run first). */
export type WorkflowAdvanceEnd =
  { outcome: "waiting" | "finished" | "blocked" | "fenced"; replayedEntries: number } | { outcome: "error"; error: unknown };

/** The span of one advance. */
export interface WorkflowAdvanceTrace {
  /** Its context, stored with the run when the advance commits: the next advance links to it. */
  readonly carrier: TraceCarrier | undefined;
  /** Runs the advance inside the span: the work of the steps it starts is enqueued there. */
  run<T>(fn: () => T): T;
  end(result: WorkflowAdvanceEnd): void;
}

/** A step of a run whose outcome was given to its function: its span covers the step from its call to its outcome. */
export interface WorkflowStepTraceInfo extends WorkflowTraceInfo {
  /** The run's stored context, if it has one. */
  run: TraceCarrier | undefined;
  /** The step's position in the journal. */
  n: number;
  kind: "action" | "mutation" | "sleep" | "event" | "workflow";
  /** The handler, event or workflow name (for a sleep, "sleep"). */
  name: string;
  outcome: "success" | "failed" | "canceled" | "event" | "timeout";
  /** The error, for `failed`. */
  error?: string;
  /** When the step was called and when it ended, epoch ms (the pool's clock). */
  startedAt: number;
  finishedAt: number;
  /** The step's work, or child run, when known. */
  workId?: string;
  childId?: string;
}

/** The hooks for durable workflows (optional part of {@link Telemetry}). */
export interface WorkflowTelemetry {
  /** Starts the root span of a run, before the run is written. */
  start(info: WorkflowTraceInfo & { parentId: string | null }): WorkflowStartTrace;
  /** Starts the span of an advance of a run. */
  advance(info: WorkflowAdvanceTraceInfo): WorkflowAdvanceTrace;
  /** Records a step that ended. */
  step(info: WorkflowStepTraceInfo): void;
  /**
   * Runs `fn`, a write that moves a run on from outside it (an event sent, a cancel, a
   * restart), in the run's trace (optional): the advance it enqueues is traced there.
   */
  within?<T>(run: TraceCarrier, fn: () => T): T;
}

/** The hooks a pool calls. Each call is guarded: a hook that throws is reported once and traces nothing more. */
export interface Telemetry {
  /** Starts the span of an enqueue call, before its rows are written. */
  enqueue(info: EnqueueTraceInfo): EnqueueTrace;
  /** Starts the span of an attempt, just before its handler runs. */
  attempt(info: AttemptTraceInfo): AttemptTrace;
  /** Starts the span of an onComplete delivery (optional). */
  onComplete?(info: AttemptTraceInfo): AttemptTrace;
  /** The hooks of workflow runs on the pool (optional): a WorkflowManager calls them. */
  workflow?: WorkflowTelemetry;
}

/** Checks the `telemetry` option. */
export function checkTelemetry(value: unknown): Telemetry {
  const t = value as Partial<Record<keyof Telemetry, unknown>> | null;
  if (
    typeof t !== "object" ||
    t === null ||
    typeof t.enqueue !== "function" ||
    typeof t.attempt !== "function" ||
    (t.onComplete !== undefined && typeof t.onComplete !== "function") ||
    (t.workflow !== undefined && !isWorkflowTelemetry(t.workflow))
  ) {
    throw new InvalidArgumentError(
      "telemetry",
      "must be an object with enqueue() and attempt() methods (and optionally onComplete(), and workflow with start(), advance() and step()), such as openTelemetry() from workpool/opentelemetry",
    );
  }
  return value as Telemetry;
}

function isWorkflowTelemetry(value: unknown): boolean {
  const w = value as Partial<Record<keyof WorkflowTelemetry, unknown>> | null;
  return (
    typeof w === "object" &&
    w !== null &&
    typeof w.start === "function" &&
    typeof w.advance === "function" &&
    typeof w.step === "function" &&
    (w.within === undefined || typeof w.within === "function")
  );
}
