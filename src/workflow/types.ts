/**
 * The public types of `workpool/workflow`: workflow handles and functions, the step API a
 * workflow function receives, and what status() and steps() return.
 */
import type { ActionHandle, MutationHandle } from "../handlers.js";
import type { JsonValue, RetryBehavior, WorkId } from "../types.js";

declare const workflowTypes: unique symbol;

/** A defined workflow of pool `P`, typed by its args and return value. */
export interface WorkflowHandle<A, R, P extends string = string> {
  readonly kind: "workflow";
  readonly name: string;
  /** The pool whose manager defined it. */
  readonly pool: P;
  /** Type-only marker; never present at run time. */
  readonly [workflowTypes]?: (args: A) => R;
}

/** A workflow function: deterministic code that does its work through `step`. */
export type WorkflowFn<A, R, P extends string = string> = (step: WorkflowStep<P>, args: A) => Promise<R>;

/** Options of define(). */
export interface DefineWorkflowOptions {
  /** A run still going this long after it started is canceled and fails as timed out. 1 ms to 1 year; default none. */
  timeoutMs?: number;
  /** The version of this code (e.g. a date or a release), recorded with each run it starts. 1 to 100 characters of letters, digits and _ . : - / +. */
  version?: string;
  /** Runs this code starts are driven only by processes that define the same version (needs `version`). Default false. */
  pinVersion?: boolean;
}

/** Options of a step that runs as work of the pool. */
export interface WorkStepOptions {
  /** Display name of the step's work (and of its journal entry's `name` in status views). */
  name?: string;
  /** The work's own timeout, ms. */
  timeoutMs?: number;
  /** The per-key limit's key of the step's work. */
  key?: string;
  /** Claim order of the step's work, -1000..1000. */
  priority?: number;
  /** Start no sooner than this many ms after the step is called. */
  runAfter?: number;
}

/** Options of an action step: retries as for enqueued actions (unset: the pool's default). */
export interface ActionStepOptions extends WorkStepOptions {
  retry?: boolean | RetryBehavior;
}

/** What awaitEvent() resolves with: the event's payload, or a timeout. */
export type EventResult<T> = { kind: "event"; value: T } | { kind: "timeout" };

/**
 * What step.map() does when an item's callback throws: `"fail-fast"` ends the items still
 * in flight (their steps end canceled, their work is canceled), starts no more and rejects
 * with that item's error; `"collect"` resolves with a {@link MapItemResult} per item;
 * `"ignore"` resolves with the values, `undefined` in place of each failed item.
 */
export type MapFailureMode = "fail-fast" | "collect" | "ignore";

/** Options of step.map(). */
export interface MapOptions {
  /** Most item callbacks in flight at once (when one ends the next starts), 1..10,000; default 10. */
  concurrency?: number;
  /** What a failed item does; default "fail-fast". */
  onFailure?: MapFailureMode;
}

/** One item's outcome in a `"collect"` map: its value, or what its callback threw (usually a StepFailedError). */
export type MapItemResult<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * The step API of one run. Every call is matched to the run's journal by the order of the
 * calls; call steps only from the workflow function, and await only step calls (and
 * promises made of them).
 */
export interface WorkflowStep<P extends string = string> {
  /** The run's id. */
  readonly workflowId: string;
  /** Runs an action as work of the pool; resolves with its return value, rejects with a StepFailedError. */
  runAction<A, R>(handle: ActionHandle<A, R, P>, args: A, options?: ActionStepOptions): Promise<R>;
  /** Runs a mutation as work of the pool, exactly once; its writes and the journal entry commit together. */
  runMutation<A, R>(handle: MutationHandle<A, R, P>, args: A, options?: WorkStepOptions): Promise<R>;
  /** Waits `ms` of the pool's clock; durable, and holds no slot or memory while it waits. */
  sleep(ms: number): Promise<void>;
  /** Waits for an event sent with sendEvent(); each event is taken by one awaitEvent. */
  awaitEvent<T = JsonValue>(name: string, options?: { timeoutMs?: number }): Promise<EventResult<T>>;
  /** Runs another workflow as a child run; resolves with its result, rejects if it fails or is canceled. */
  runWorkflow<A, R>(handle: WorkflowHandle<A, R, P>, args: A): Promise<R>;
  /**
   * Calls `fn` for each item, at most `options.concurrency` at a time (when one ends the next
   * starts); `fn` does its work through step calls. Resolves with the results in item order;
   * a failed item is handled as `options.onFailure` says (default "fail-fast": the map
   * rejects with its error). At most 100,000 items. A run's cancel rejects it in every mode.
   */
  map<T, R>(
    items: readonly T[],
    fn: (item: T, index: number) => R | PromiseLike<R>,
    options?: MapOptions & { onFailure?: "fail-fast" },
  ): Promise<Awaited<R>[]>;
  map<T, R>(
    items: readonly T[],
    fn: (item: T, index: number) => R | PromiseLike<R>,
    options: MapOptions & { onFailure: "collect" },
  ): Promise<MapItemResult<Awaited<R>>[]>;
  map<T, R>(
    items: readonly T[],
    fn: (item: T, index: number) => R | PromiseLike<R>,
    options: MapOptions & { onFailure: "ignore" },
  ): Promise<(Awaited<R> | undefined)[]>;
  map<T, R>(
    items: readonly T[],
    fn: (item: T, index: number) => R | PromiseLike<R>,
    options?: MapOptions,
  ): Promise<Awaited<R>[] | MapItemResult<Awaited<R>>[] | (Awaited<R> | undefined)[]>;
  /** The pool clock's time, recorded in the journal: the same value on every replay. */
  now(): number;
  /** A random number in [0, 1), recorded in the journal. */
  random(): number;
  /** A random UUID, recorded in the journal. */
  uuid(): string;
  /**
   * Whether the run takes the code path added with patch `id`: true for a run that reaches
   * this point with this code (a marker is journaled) or whose journal has the marker here;
   * false, taking no journal position, for a run whose journal records something else here
   * (it was started by the code before the patch).
   */
  patched(id: string): boolean;
  /**
   * Marks patch `id` as the only path: the marker a run's journal has here is consumed, and a
   * run without it takes no journal position. Use it once no run started before the patch is left.
   */
  deprecatePatch(id: string): void;
}

/** Options of start(). */
export interface StartOptions<Tx, C = unknown> {
  /** The run's id: a second start() with the same id starts nothing and returns it. Default: a new id. */
  workflowId?: string;
  /** The caller's open transaction: the run exists if and only if it commits. */
  tx?: Tx;
  /** A mutation of the pool run once, in the transaction that finishes the run, with `{ workflowId, context, result }`. */
  onComplete?: MutationHandle<WorkflowOnCompleteArgs<C>, unknown>;
  /** JSON given to onComplete as `context`. */
  context?: C;
}

/** Options of sendEvent(). */
export interface SendEventOptions<Tx> {
  /** The caller's open transaction: the event is sent if and only if it commits. */
  tx?: Tx;
}

/** Options of restart(). */
export interface RestartOptions {
  /** The first journal entry to drop and run again (0 to the run's step count). */
  from: number;
}

/** Options of fork(). */
export interface ForkOptions {
  /** The first journal entry not copied: the fork's function goes on from its call `from` (0 to the run's step count). */
  from: number;
  /** The new run's id (default: a new id); refused if a run has it. */
  workflowId?: string;
}

/** How a run ended. */
export type WorkflowResult<R = JsonValue> = { kind: "success"; returnValue: R } | { kind: "failed"; error: string } | { kind: "canceled" };

/** What a workflow's onComplete mutation receives. */
export interface WorkflowOnCompleteArgs<C = unknown, R = JsonValue> {
  workflowId: string;
  context: C;
  result: WorkflowResult<R>;
}

/** A journal entry's kind and name: what a determinism check compares. */
export interface StepCallInfo {
  kind: "action" | "mutation" | "sleep" | "event" | "workflow" | "now" | "random" | "uuid" | "patch";
  /** The handler, event, workflow or patch name (for sleep, "sleep"). */
  name: string;
}

/** Why a run is blocked: its code called step `n` differently from what the journal recorded. */
export interface BlockedInfo {
  n: number;
  /** What the code called at position n (null: it made no call there, e.g. returned earlier). */
  expected: StepCallInfo | null;
  /** What the journal recorded at position n (null: nothing, the code made more calls than it recorded). */
  recorded: StepCallInfo | null;
}

/** A run's status. */
export interface WorkflowStatus<R = JsonValue> {
  workflowId: string;
  name: string;
  state: "running" | "success" | "failed" | "canceled" | "blocked";
  /** True while a cancel (or the run's timeout) is taking effect: the handler is unwinding. */
  cancelRequested: boolean;
  result?: R;
  error?: string;
  blocked?: BlockedInfo;
  /** Journal entries so far. */
  steps: number;
  parentId: string | null;
  /** The version of the workflow's code that started the run (define's `version`), or null. */
  version: string | null;
  createdAt: number;
  finishedAt: number | null;
}

/** One journal entry, as steps() returns it. */
export interface WorkflowStepInfo {
  n: number;
  kind: StepCallInfo["kind"];
  name: string;
  state: "running" | "waiting" | "success" | "failed" | "canceled";
  args?: JsonValue;
  result?: JsonValue;
  error?: string;
  workId?: WorkId;
  childId?: string;
  startedAt: number;
  finishedAt: number | null;
}

/** A workflow version as admin.workflowVersions() reports it: who defines it, and its unfinished runs. */
export interface WorkflowVersionInfo {
  pool: string;
  name: string;
  /** null: runs started, or processes defining it, without a `version`. */
  version: string | null;
  /** A live process pins this version, or one of its unfinished runs is pinned. */
  pinned: boolean;
  /** Runs started by this version that are running, canceling or blocked. */
  unfinishedRuns: number;
  /** Whether a live process (one whose heartbeat has not expired) defines this version. */
  live: boolean;
  /** How many live processes define it. */
  processes: number;
}
