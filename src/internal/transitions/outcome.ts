/**
 * The outcome rule: how an attempt's outcome decides the transition of its row (finished
 * with a result, or pending again to retry after a backoff). The same rule runs in SQL
 * in PostgreSQL's complete() for batches decided here; test/driver checks both agree.
 */
import type { WorkRow } from "../../driver/driver.js";
import type { ErrorDetail } from "../../error-text.js";
import type { CompletedEvent, CompletionStatus } from "../../events.js";
import { backoffMs, canRetry } from "../../retry.js";
import type { RetryBehavior, RunResult, WorkId } from "../../types.js";
import type { PoolRuntime } from "../runtime.js";
import type { AttemptOutcome } from "./attempt-outcome.js";

export type { AttemptOutcome } from "./attempt-outcome.js";
import { boundScheduledTime } from "../run-at.js";
import { runsOnComplete, workLogLevel } from "../work-meta.js";

/** An attempt that threw (or whose worker was lost), as its record in the attempt log keeps it. */
export interface AttemptFailure {
  message: string;
  detail?: ErrorDetail;
  /** The attempt's worker stopped renewing its lease. */
  lost?: boolean;
}

/** What happens to a row: it finishes with `result`, or goes back to pending until `runAt`. */
export interface Transition {
  row: WorkRow;
  status: CompletionStatus;
  result?: RunResult;
  runAt?: number;
  error?: string;
  /**
   * Set when the store refused the delivery of this row's onComplete: the work finishes
   * with its onComplete marked failed for this reason, without running the handler.
   */
  onCompleteRefused?: string;
  /** Set when the attempt threw or was lost: recorded in the row's attempt log. */
  failure?: AttemptFailure;
}

/**
 * The retry behaviour a row is judged by. A mutation has none, but if its worker was
 * lost it never committed, so it is run again under the pool's default behaviour:
 * that keeps "exactly once" without looping forever on a mutation that kills workers.
 */
function effectiveRetry<Tx>(rt: PoolRuntime<Tx>, row: WorkRow, lostWorker: boolean): RetryBehavior | null {
  if (row.kind === "mutation") return lostWorker ? rt.options.defaultRetryBehavior : null;
  return row.retry;
}

/**
 * Decides the transition of a running row whose attempt ended with `outcome`. A cancel
 * request wins over any outcome: canceled work is never retried.
 */
export function decide<Tx>(rt: PoolRuntime<Tx>, row: WorkRow, outcome: AttemptOutcome, now: number, lostWorker = false): Transition {
  const failure: AttemptFailure | undefined =
    outcome.kind === "failed" ? { message: outcome.error, detail: outcome.detail, lost: lostWorker || undefined } : undefined;
  if (row.cancelRequested || outcome.kind === "canceled") {
    return { row, status: "canceled", result: { kind: "canceled" }, failure };
  }
  if (outcome.kind === "success") {
    return { row, status: "success", result: { kind: "success", returnValue: outcome.returnValue } };
  }
  const retry = effectiveRetry(rt, row, lostWorker);
  if (outcome.retryable && canRetry(retry, row.attempt)) {
    const delay = backoffMs(retry!, row.attempt, rt.options.random, (m) => rt.logger.error(m));
    const runAt = boundScheduledTime(now + delay, now, rt.logger);
    return { row, status: "retrying", runAt, error: outcome.error, failure };
  }
  const result: RunResult = { kind: "failed", error: outcome.error };
  if (outcome.errorData !== undefined) result.errorData = outcome.errorData;
  return { row, status: "failed", result, error: outcome.error, failure };
}

/**
 * The attempt-log record of a transition whose attempt threw or was lost (JSON text), or
 * null: `{ attempt, startedAt, endedAt, outcome, error: { message, name?, stack? } }`.
 * Built here only for the attempts that fail, so work that succeeds pays nothing.
 */
export function attemptEntry(t: Transition, now: number): string | null {
  const f = t.failure;
  if (!f) return null;
  const error: { message: string; name?: string; stack?: string } = { message: f.message };
  if (f.detail?.name !== undefined) error.name = f.detail.name;
  if (f.detail?.stack !== undefined) error.stack = f.detail.stack;
  const outcome = f.lost ? "lost" : t.status;
  return JSON.stringify({ attempt: t.row.attempt, startedAt: t.row.startedAt, endedAt: now, outcome, error });
}

/** A pending row canceled before it started. */
export function cancelPending(row: WorkRow): Transition {
  return { row, status: "canceled", result: { kind: "canceled" } };
}

/** The `completed` event of a transition of `row`. */
export function completedEvent<Tx>(
  rt: PoolRuntime<Tx>,
  row: WorkRow,
  status: CompletionStatus,
  now: number,
  error?: string,
): CompletedEvent {
  const event: CompletedEvent = {
    event: "completed",
    pool: rt.pool,
    workId: row.id as WorkId,
    fnName: row.fnName,
    status,
    attempts: row.attempt,
    completedAt: now,
    lagSinceEnqueuedMs: now - row.enqueuedAt,
  };
  if (row.state === "running" && row.startedAt !== null) event.durationMs = now - row.startedAt;
  if (error !== undefined) event.error = error;
  // Named only where it runs: a failure whose onComplete is skipped is nobody's to handle.
  if (row.onComplete !== null && (status === "retrying" || runsOnComplete(row, status))) event.onComplete = row.onComplete;
  const level = workLogLevel(row);
  if (level !== undefined) event.logLevel = level;
  return event;
}
