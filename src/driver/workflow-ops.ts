/**
 * The driver operations behind durable workflows (src/workflow/): a run's row, its journal
 * of steps and the events sent to it. Every method runs on the connection or transaction
 * the ops were made for (see Driver.workflows). On SQLite each returns its value at once
 * (so a start or sendEvent inside the caller's synchronous transaction writes before it
 * returns); on PostgreSQL a promise. Times are parameters.
 */
import type { WorkflowVersionOps } from "./workflow-version-ops.js";

/** A value now (SQLite) or later (PostgreSQL). */
export type Maybe<T> = T | Promise<T>;

/** States of a run. */
export type RunState = "running" | "canceling" | "blocked" | "success" | "failed" | "canceled";

/** Kinds of journal entries. */
export type StepKind = "action" | "mutation" | "sleep" | "event" | "workflow" | "value" | "patch";

/** States of a journal entry. */
export type StepState = "running" | "waiting" | "done" | "failed" | "canceled";

/** Delivery state of a run's onComplete. */
export type RunOnCompleteState = "none" | "pending" | "done" | "failed";

/** A run as stored. JSON columns are text. */
export interface RunRow {
  id: string;
  pool: string;
  name: string;
  args: string;
  state: RunState;
  generation: number;
  result: string | null;
  blocked: string | null;
  cancelReason: "canceled" | "timeout" | null;
  onComplete: string | null;
  context: string | null;
  ocState: RunOnCompleteState;
  ocAttempts: number;
  ocError: string | null;
  parentId: string | null;
  parentStep: number | null;
  steps: number;
  journalBytes: number;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  deadline: number | null;
  /** The version of the workflow's code that started the run (define()'s `version`), or null. */
  version: string | null;
  /** The workflow's timeout when the run started, ms (a restart sets its deadline from it), or null. */
  timeoutMs: number | null;
  /** Only a process that defines the run's version runs its function. */
  pinned: boolean;
  /** When an advance landed in a process without the run's version (null: not parked). */
  parkedAt: number | null;
  /** The run's trace context (JSON), when its pool traces. */
  trace: string | null;
}

/** A new run. */
export type NewRun = Pick<
  RunRow,
  "id" | "pool" | "name" | "args" | "onComplete" | "context" | "parentId" | "parentStep" | "deadline" | "version" | "timeoutMs" | "pinned"
> & {
  now: number;
  trace?: string | null;
};

/** A journal entry as stored. */
export interface StepRow {
  runId: string;
  n: number;
  kind: StepKind;
  name: string;
  state: StepState;
  args: string | null;
  outcome: string | null;
  workId: string | null;
  childId: string | null;
  delivered: number | null;
  startedAt: number;
  finishedAt: number | null;
}

/** A change to a run, written only while it has generation `expect` (null: whatever it has). */
export interface RunUpdate {
  state?: RunState;
  result?: string | null;
  blocked?: string | null;
  cancelReason?: "canceled" | "timeout" | null;
  ocState?: RunOnCompleteState;
  ocAttempts?: number;
  ocError?: string | null;
  finishedAt?: number | null;
  deadline?: number | null;
  /** Added to the run's step count and journal size. */
  addSteps?: number;
  addBytes?: number;
  now: number;
}

/** A fork of a run: its new id and time, and the entries (before `from`) it copies. */
export interface ForkRun {
  id: string;
  sourceId: string;
  /** Entries of the source before this one are copied. */
  from: number;
  /** How many entries that is, and their bytes of args and outcomes. */
  steps: number;
  journalBytes: number;
  deadline: number | null;
  now: number;
}

/** A run as a list shows it: without its args, context and result; `error` is a failed run's error, cut to 1,000 characters. */
export type RunListRow = Omit<RunRow, "args" | "context" | "result"> & { error: string | null };

/** Which runs listRuns() reads, newest first (by created_at, then id). Null fields do not filter. */
export interface RunQuery {
  pool: string | null;
  name: string | null;
  states: readonly RunState[] | null;
  version: string | null;
  parentId: string | null;
  /** Created at or after, ms. */
  createdAfter: number | null;
  /** Created before, ms. */
  createdBefore: number | null;
  /** The last run of the previous page: this page starts after it. */
  after: { createdAt: number; id: string } | null;
  limit: number;
}

/** How many runs of a workflow are in one state. */
export interface RunCount {
  pool: string;
  name: string;
  state: RunState;
  count: number;
}

/** An event sent to a run, as stored. */
export interface EventRow {
  seq: number;
  name: string;
  payload: string;
  sentAt: number;
  /** The journal entry whose awaitEvent took it, or null while it waits to be taken. */
  consumedStep: number | null;
}

/** The operator's reads of runs (the admin API); not used while running workflows. */
export interface WorkflowReadOps {
  /** A page of runs matching `query`, newest first. */
  listRuns(query: RunQuery): Maybe<RunListRow[]>;
  /** Runs counted by pool, workflow name and state (of one pool, or of all). */
  countRuns(pool: string | null): Maybe<RunCount[]>;
  /** The newest `limit` events sent to a run, newest first. */
  readEvents(runId: string, limit: number): Maybe<EventRow[]>;
}

/** The operations on one connection or transaction. */
export interface WorkflowOps extends WorkflowReadOps, WorkflowOperatorOps, WorkflowVersionOps {
  /** Inserts a run; false when a run with its id exists (nothing written). */
  insertRun(run: NewRun): Maybe<boolean>;
  /** Reads a run (FOR UPDATE inside a PostgreSQL transaction). */
  lockRun(id: string): Maybe<RunRow | null>;
  /** Reads a run without a lock. */
  readRun(id: string): Maybe<RunRow | null>;
  /**
   * Applies `update` and moves the run to the next generation, if it is still at `generation`.
   * False (nothing written) when another writer moved it first.
   */
  advanceRun(id: string, generation: number, update: RunUpdate): Maybe<boolean>;
  /** Applies `update` whatever the generation, and moves to the next generation. */
  updateRun(id: string, update: RunUpdate): Maybe<void>;
  /** Replaces the run's trace context; the generation stays (tracing is no state of the run). */
  setTrace(id: string, trace: string): Maybe<void>;
  /** The run's journal from entry `from` on, in order. */
  readSteps(runId: string, from?: number): Maybe<StepRow[]>;
  /** The run's entries that have an outcome the function was not given yet (not now/random/uuid), in order. */
  readUndelivered(runId: string): Maybe<StepRow[]>;
  /** Appends journal entries. */
  insertSteps(rows: readonly StepRow[]): Maybe<void>;
  /**
   * Ends entry n if it is still `running` or `waiting` and, given `workId`, is still the entry
   * of that work or child run (a restart may have made a new entry n); true if it was.
   */
  endStep(runId: string, n: number, state: StepState, outcome: string, now: number, workId?: string): Maybe<boolean>;
  /** Records the generation whose advance gave these entries' outcomes to the handler. */
  markDelivered(runId: string, ns: readonly number[], generation: number): Maybe<void>;
  /** Ends every entry still running or waiting `canceled` with `outcome`; returns those entries as they were. */
  cancelOpenSteps(runId: string, outcome: string, now: number): Maybe<StepRow[]>;
  /**
   * Deletes up to `limit` runs of `pool` that finished (success, failed, canceled) at or before
   * `before`, with their journals and events; returns how many runs. A run is kept while its
   * onComplete is pending or its parent run has not finished.
   */
  deleteFinishedRuns(pool: string, before: number, limit: number): Maybe<number>;
  /** Deletes entries from `from` on, and gives the events they took back to the run (a restart). */
  deleteStepsFrom(runId: string, from: number): Maybe<void>;
  /** Stores an event sent to a run; returns its sequence number. */
  insertEvent(runId: string, name: string, payload: string, now: number): Maybe<number>;
  /** Takes the oldest unconsumed event `name` of the run for entry `n`; null when there is none. */
  takeEvent(runId: string, name: string, n: number): Maybe<{ seq: number; payload: string } | null>;
  /** The lowest entry waiting for event `name`, or null. */
  waitingFor(runId: string, name: string): Maybe<number | null>;
  /** Ids of the run's child runs that have not finished. */
  openChildren(runId: string): Maybe<string[]>;
}

/** What the operator's actions on runs write beyond the engine's operations (src/workflow/operate.ts). */
export interface WorkflowOperatorOps {
  /**
   * Inserts a running run copied from `fork.sourceId` (same pool, name, args, version and
   * timeout; its generation,
   * so copied entries keep their delivery rounds' order; no onComplete, no parent) with the
   * source's entries before `fork.from` and its events (those taken by copied entries stay
   * taken, the others are not taken). False when a run with the fork's id exists (nothing written).
   */
  forkRun(fork: ForkRun): Maybe<boolean>;
  /**
   * Deletes entry `n`, gives back the event it took, and moves every later entry down by one
   * (with the events they took and their child runs' parent_step). The caller holds the run.
   */
  dropStep(runId: string, n: number): Maybe<void>;
}

/** The workflow noun of the driver interface. */
export interface WorkflowStoreOps<Tx> {
  /**
   * The workflow operations on `tx`, the raw handle of an open transaction (ours or the
   * caller's), or, without one, on the store's connection (each call on its own).
   */
  workflows(tx?: Tx): WorkflowOps;
}
