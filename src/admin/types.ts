/**
 * The admin API's types: what `workpoolAdmin(store)` returns and what its calls take and
 * give. Exported from `workpool/admin`; the dashboard is built on exactly this shape.
 */
import type { Registry } from "prom-client";
import type { Clock } from "../clock.js";
import type { LogLevel, WorkpoolEventName, WorkpoolEvents } from "../events.js";
import type { JsonValue, ResultKind, WorkId } from "../types.js";
import type { AttemptLogLine } from "../internal/attempt-logs.js";
import type { Progress } from "../internal/progress.js";

/** Filter of list(): a state, or one kind of finished work. `retrying` = pending with attempts made (waiting out a backoff). */
export type AdminStateFilter = "pending" | "retrying" | "running" | "finished" | "success" | "failed" | "canceled";

import type { RateLimit } from "../types.js";
import type { ScheduleInfo } from "../cron/schedules.js";
import type { ForkOptions, RestartOptions, WorkflowStatus, WorkflowStepInfo, WorkflowVersionInfo } from "../workflow/types.js";
import type { WorkflowCounts, WorkflowListOptions, WorkflowListPage, WorkflowRunDetail, WorkflowRunOptions } from "./workflow-types.js";
import type { RetryAllFilter, RetryAllOptions, RetryAllPreview, RetryAllResult } from "./retry-all-types.js";

export type { RateLimit };

/** One pool as admin.pools() reports it. */
export interface PoolSummary {
  name: string;
  /** The stored limit (0 while paused). A pool that has work but was never started reports the default, 10. */
  maxParallelism: number;
  /** Set while paused: the limit resume() restores. null when not paused. */
  pausedFrom: number | null;
  /** The per-key parallelism limit; null when unset. */
  keyParallelism: number | null;
  /** At most `limit` attempt starts in any `periodMs`; null when unset. */
  rateLimit: RateLimit | null;
  /** The same per key; null when unset. */
  keyRateLimit: RateLimit | null;
  counts: {
    /** Due or scheduled, never attempted. */
    pending: number;
    /** Pending after at least one failed attempt (waiting out a backoff). */
    retrying: number;
    running: number;
    success: number;
    failed: number;
    canceled: number;
  };
  /** Age of the oldest due pending work, ms; null when none is due. */
  oldestPendingAgeMs: number | null;
  /** Attempts started and work finished in the last 60 s (from the store). */
  lastMinute: {
    started: number;
    finished: number;
    /** Mean wait to start (from due to started) of the running and finished work that started in it, ms; null if none. */
    meanWaitMs: number | null;
  };
}

/** One row of admin.list(). */
export interface WorkSummary {
  id: WorkId;
  pool: string;
  kind: "action" | "mutation";
  handler: string;
  /** Display name (enqueue's `name`), or null. */
  name: string | null;
  state: "pending" | "running" | "finished";
  /** For finished work: how it ended. */
  resultKind: "success" | "failed" | "canceled" | null;
  /** Attempts started so far. */
  attempts: number;
  /** Claim order among due work: lower first (0 unless set at enqueue). */
  priority: number;
  /** The key its pool's keyParallelism limits, or null. */
  key: string | null;
  runAt: number;
  enqueuedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

/** One attempt of a work (the last 10 are kept). */
export interface AttemptRecord {
  attempt: number;
  startedAt: number | null;
  endedAt: number;
  outcome: "success" | "failed" | "retrying" | "canceled" | "lost";
  error?: { message: string; name?: string; stack?: string };
}

/** Everything about one work: admin.get(id). */
export interface WorkDetail extends WorkSummary {
  args: JsonValue;
  context: JsonValue | undefined;
  retry: { maxAttempts: number; initialBackoffMs: number; base: number } | null;
  timeoutMs: number | null;
  /** The result while retained (finished work); a failure's `errorData` when its handler threw a WorkError with data. */
  result:
    | { kind: "success"; returnValue: JsonValue | undefined }
    | { kind: "failed"; error: string; errorData?: JsonValue }
    | { kind: "canceled" }
    | null;
  /**
   * The onComplete handler and its delivery: `skipped` when the work finished with a
   * result kind its `onCompleteExcludeKinds` names.
   */
  onComplete: { handler: string; state: "pending" | "done" | "failed" | "skipped"; failedAttempts: number; error: string | null } | null;
  /** The result kinds whose onComplete is skipped (`onCompleteExcludeKinds`); empty for none. */
  onCompleteExcludeKinds: ResultKind[];
  /** The work's own log level, or null for the pool's. */
  logLevel: LogLevel | null;
  /** The W3C `traceparent` of the span that enqueued it (with `telemetry`), or null. */
  traceparent: string | null;
  /** Oldest first, at most 10. */
  attemptHistory: AttemptRecord[];
  /** The new work retry() made of this one, or null: a work is retried at most once. */
  retriedAs: WorkId | null;
  /** The last progress its latest attempt reported (`ctx.reportProgress`), or null. */
  progress: Progress | null;
  /** What its attempts reported of themselves (progress, log lines), oldest first; attempts that reported nothing are absent. */
  attemptOutput: AttemptOutputRecord[];
}

/** What one attempt of an action reported of itself: its last progress and its log lines (`ctx.log`). */
export interface AttemptOutputRecord {
  attempt: number;
  /** The last progress reported, or null. */
  progress: Progress | null;
  /** When it was reported (epoch ms), or null. */
  progressAt: number | null;
  /** The kept lines, oldest first: the last 200, within 64 KiB. Text is as the handler gave it. */
  logs: AttemptLogLine[];
  /** How many earlier lines were dropped to keep within those bounds. */
  droppedLines: number;
  /** When its worker last wrote it (epoch ms). */
  updatedAt: number;
}

/** Options of admin.list(). */
export interface ListOptions {
  state?: AdminStateFilter;
  handler?: string;
  key?: string;
  /** A work id (exact), or a handler / display name prefix. */
  search?: string;
  /** 1..500, default 50. */
  limit?: number;
  /** From a previous page's `cursor`. */
  cursor?: string;
}

/** One page of admin.list(). */
export interface ListPage {
  items: WorkSummary[];
  /** Pass to the next list() call; null on the last page. Newest first, keyset-paginated. */
  cursor: string | null;
}

/** Anything whose events the admin can count for metrics: a `Workpool`. */
export interface ObservablePool {
  readonly name: string;
  on<K extends WorkpoolEventName>(event: K, listener: (e: WorkpoolEvents[K]) => void): () => void;
}

/** Options of workpoolAdmin(). */
export interface WorkpoolAdminOptions {
  /** Time source for ages, "last minute" counts and the times the admin writes. Default: the system clock. */
  clock?: Clock;
}

/** The operator's view of a store: see docs/api.md#admin-api. */
export interface WorkpoolAdmin {
  /** Every pool in the store (a stored configuration, or work), by name. */
  pools(): Promise<PoolSummary[]>;
  /** The cron schedules of `pool` (default: of every pool), by pool and id, with their next tick and last work. */
  schedules(pool?: string): Promise<ScheduleSummary[]>;
  /** A page of a pool's work, newest first. */
  list(pool: string, options?: ListOptions): Promise<ListPage>;
  /** Everything about one work, or null when the store has no work with this id. */
  get(id: string): Promise<WorkDetail | null>;
  /** Cancels one work (as `pool.cancel`): true if this call canceled it or asked its attempt to stop. */
  cancel(id: string): Promise<boolean>;
  /** Cancels a pool's unfinished work enqueued before `before` (default: now), optionally of one handler. Returns how many. */
  cancelAll(pool: string, filter?: { before?: number; handler?: string; key?: string }): Promise<number>;
  /**
   * A finished failed or canceled work runs again as new work: returns the new id. A work
   * is retried once: a second retry (even a concurrent one) is refused, naming the first's work.
   */
  retry(id: string): Promise<WorkId>;
  /**
   * Retries, as retry() does, every finished work of `pool` that matches `filter` and was
   * not retried yet, 500 per transaction; with `dryRun`, lists it and writes nothing. Running
   * it again retries only what the first run did not: see docs/api.md#admin-api.
   */
  retryAll(pool: string, filter: RetryAllFilter, options: RetryAllOptions & { dryRun: true }): Promise<RetryAllPreview>;
  retryAll(pool: string, filter: RetryAllFilter, options?: RetryAllOptions & { dryRun?: false }): Promise<RetryAllResult>;
  retryAll(pool: string, filter: RetryAllFilter, options?: RetryAllOptions): Promise<RetryAllResult | RetryAllPreview>;
  /**
   * Deletes a pool's finished work (finished before `before`), or cancels its pending work
   * (enqueued before `before`) and deletes it. Returns how many.
   */
  purge(pool: string, options: { state: "finished" | "pending"; before?: number }): Promise<number>;
  /** Sets the pool's limit to 0, remembering the limit for resume(). */
  pause(pool: string): Promise<void>;
  /** Restores the limit that was set before the pause. */
  resume(pool: string): Promise<void>;
  /** Sets the pool's limit (0..10000) for every process; ends a pause. */
  setParallelism(pool: string, n: number): Promise<void>;
  /** A workflow run's status (as WorkflowManager.status()), or null when the store has no run with this id. */
  workflow(id: string): Promise<WorkflowStatus | null>;
  /** A workflow run's journal (as WorkflowManager.steps()), or null when the store has no run with this id. */
  workflowSteps(id: string): Promise<WorkflowStepInfo[] | null>;
  /** A page of workflow runs (of every pool, or the filters'), newest first. */
  workflows(options?: WorkflowListOptions): Promise<WorkflowListPage>;
  /** Workflow runs counted by state, one row per pool and workflow name. */
  workflowCounts(pool?: string): Promise<WorkflowCounts[]>;
  /** A run with part of its journal, its first child runs and newest events, or null when the store has no run with this id. */
  workflowRun(id: string, options?: WorkflowRunOptions): Promise<WorkflowRunDetail | null>;
  /**
   * Asks for a workflow run's cancel: true when the run is running or blocked and the request
   * is written; a started worker of its pool (with its WorkflowManager) carries it out, as
   * WorkflowManager.cancel() does. False for an unknown or finished run.
   */
  cancelWorkflow(id: string): Promise<boolean>;
  /**
   * A failed, canceled or blocked run continues from entry `from` (as WorkflowManager.restart()):
   * a started worker of its pool runs it. UnknownWorkflowError for an unknown run.
   */
  restartWorkflow(id: string, options: RestartOptions): Promise<void>;
  /**
   * A new run of the same workflow and args with a copy of the run's entries before `from`
   * (as WorkflowManager.fork()); returns its id. The source is not changed.
   */
  forkWorkflow(id: string, options: ForkOptions): Promise<string>;
  /** A blocked run goes on without the entry it is blocked at (as WorkflowManager.skip()). */
  skipWorkflowStep(id: string): Promise<void>;
  /** Sends event `name` to a run (as WorkflowManager.sendEvent()); refused for an unknown or finished run. */
  sendWorkflowEvent(id: string, name: string, payload?: unknown): Promise<void>;
  /**
   * The workflow versions of `pool` (every pool when omitted): each (pool, workflow, version)
   * that a live process defines or an unfinished run was started by, with how many of each.
   * A version with unfinished runs and `live: false` has no process to drive its pinned runs.
   */
  workflowVersions(pool?: string): Promise<WorkflowVersionInfo[]>;
  /** Prometheus text exposition (gauges from the store + this process's pools' counters). */
  metrics(): Promise<string>;
  /** The prom-client registry behind metrics(), for merging with the app's own. */
  readonly registry: Registry;
  /** Counts `pool`'s events (enqueued, started, finished, durations) in the metrics. Returns a function that stops it. */
  observe(pool: ObservablePool): () => void;
}

/** One cron schedule as admin.schedules() reports it: its pool, spec, next tick and last work. */
export interface ScheduleSummary extends ScheduleInfo {
  pool: string;
}
