/**
 * What the parts of the workflow layer share for one pool: the pool's runtime, the defined
 * workflows, the internal handlers that drive runs, and the executions this process keeps.
 */
import type { Driver } from "../driver/driver.js";
import type { Maybe, WorkflowOps } from "../driver/workflow-ops.js";
import type { ActionHandle, MutationHandle, OnCompleteHandle } from "../handlers.js";
import type { PoolRuntime } from "../internal/runtime.js";
import type { WorkId } from "../types.js";
import type { Workpool } from "../workpool.js";
import type { Executions } from "./executions.js";
import type { WorkflowEvents } from "./observe.js";
import type { WorkflowTracing } from "./telemetry.js";
import { ADVANCE_RETRY, advanceKey } from "./run-work.js";
import type { WorkflowFn } from "./types.js";

/** A defined workflow. */
export interface Definition {
  name: string;
  fn: WorkflowFn<unknown, unknown>;
  timeoutMs: number | null;
  /** The version recorded with the runs it starts (define()'s `version`), or null. */
  version: string | null;
  /** Its runs are driven only by processes that define the same version. */
  pinned: boolean;
}

/** Args of the internal handlers. */
export interface RunRef {
  r: string;
}
export interface StepRef {
  r: string;
  n: number;
}

/** The handles of the internal handlers that drive runs. */
export interface InternalHandles {
  /** Continues a run: replays or resumes its function and writes what it asked for. */
  advance: ActionHandle<RunRef, null>;
  /** A step's work finished: its outcome goes into the journal. */
  stepDone: OnCompleteHandle<StepRef, unknown>;
  /** An advance that gave up: the run fails instead of waiting for good. */
  advanceDone: OnCompleteHandle<RunRef, unknown>;
  /** The work a sleep step waits on (it does nothing when it runs). */
  sleep: ActionHandle<Record<string, never>, null>;
  /** An awaitEvent's timeout. */
  eventTimeout: MutationHandle<StepRef, null>;
  /** A run's own timeout. */
  runTimeout: MutationHandle<RunRef, null>;
  /** Cancels a run (written by the admin API, which has no handlers). */
  cancel: MutationHandle<RunRef, null>;
  /** Delivers a run's onComplete again after it threw. */
  deliverOnComplete: MutationHandle<RunRef, null>;
}

/** The workflow layer of one pool. */
export interface Engine<Tx> {
  readonly pool: Workpool<Tx>;
  readonly rt: PoolRuntime<Tx>;
  readonly driver: Driver<Tx>;
  readonly definitions: Map<string, Definition>;
  readonly handles: InternalHandles;
  readonly executions: Executions;
  /** Most journal entries one run may have. */
  readonly maxSteps: number;
  /** Most bytes of args and outcomes one run's journal may hold. */
  readonly maxJournalBytes: number;
  /** The workflow events it emits on the pool. */
  readonly events: WorkflowEvents;
  /** The pool's workflow telemetry. */
  readonly tracing: WorkflowTracing;
}

/** Continues with `f` at once when `v` is a value (SQLite), or once it resolves (PostgreSQL). */
export function andThen<T, U>(v: Maybe<T>, f: (t: T) => Maybe<U>): Maybe<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}

/** Enqueues an advance of `runId` in `tx` (one pending advance per run: the unique key). */
export function enqueueAdvance<Tx>(engine: Engine<Tx>, tx: Tx, runId: string, runAfter?: number): Promise<WorkId> {
  return engine.pool.enqueueAction(
    engine.handles.advance,
    { r: runId },
    {
      tx,
      uniqueKey: advanceKey(runId),
      retry: { ...ADVANCE_RETRY },
      onComplete: engine.handles.advanceDone,
      context: { r: runId },
      onCompleteExcludeKinds: ["success"],
      ...(runAfter === undefined ? {} : { runAfter }),
    },
  );
}

/** The store's workflow operations on `tx`. */
export function opsOn<Tx>(engine: Engine<Tx>, tx: Tx): WorkflowOps {
  return engine.driver.workflows(tx);
}
