/**
 * Turns attempt outcomes into state transitions and writes them: finished (with
 * onComplete delivered in the same transaction) or pending again for a retry. Used by
 * the Completer (action results), the executor (mutations), maintenance (lost workers)
 * and cancel (pending work).
 */
import type { AttemptRef, FinishWrite, PoolStats, RescheduleWrite, TxOps, WorkRow } from "../driver/driver.js";
import type { CompletedEvent, CompletionStatus } from "../events.js";
import { backoffMs, canRetry } from "../retry.js";
import type { RetryBehavior, RunResult } from "../types.js";
import { deliverOnComplete } from "./on-complete.js";
import type { PoolRuntime } from "./runtime.js";
import { boundScheduledTime } from "./schedule.js";

/** How one attempt ended, as seen by the worker that ran it. */
export type AttemptOutcome =
  { kind: "success"; returnValue: unknown } | { kind: "failed"; error: string; retryable: boolean } | { kind: "canceled" };

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
  if (row.cancelRequested || outcome.kind === "canceled") {
    return { row, status: "canceled", result: { kind: "canceled" } };
  }
  if (outcome.kind === "success") {
    return { row, status: "success", result: { kind: "success", returnValue: outcome.returnValue } };
  }
  const retry = effectiveRetry(rt, row, lostWorker);
  if (outcome.retryable && canRetry(retry, row.attempt)) {
    const delay = backoffMs(retry!, row.attempt, rt.options.random, (m) => rt.logger.error(m));
    const runAt = boundScheduledTime(now + delay, now, rt.logger);
    return { row, status: "retrying", runAt, error: outcome.error };
  }
  return { row, status: "failed", result: { kind: "failed", error: outcome.error }, error: outcome.error };
}

/** A pending row canceled before it started. */
export function cancelPending(row: WorkRow): Transition {
  return { row, status: "canceled", result: { kind: "canceled" } };
}

/**
 * Writes transitions inside `ops`' transaction, delivers onComplete for finished rows,
 * updates report counters. Returns the events to emit once the transaction commits.
 */
export async function applyTransitions<Tx>(
  rt: PoolRuntime<Tx>,
  ops: TxOps<Tx>,
  transitions: readonly Transition[],
  now: number,
): Promise<CompletedEvent[]> {
  if (transitions.length === 0) return [];
  const finishes: FinishWrite[] = [];
  const retries: RescheduleWrite[] = [];
  const stats: PoolStats = { completed: 0, succeeded: 0, failed: 0, retries: 0, canceled: 0 };
  for (const t of transitions) {
    // Work canceled while pending never ran: it is a cancelation, not a completed attempt.
    if (t.row.state === "running") stats.completed++;
    if (t.result) {
      finishes.push({ id: t.row.id, result: JSON.stringify(t.result), finishedAt: now, ocState: t.row.onComplete ? "pending" : "none" });
      if (t.status === "success") stats.succeeded++;
      else if (t.status === "failed") stats.failed++;
      else stats.canceled++;
    } else {
      retries.push({ id: t.row.id, runAt: t.runAt! });
      stats.retries++;
    }
  }
  if (finishes.length) await ops.finish(finishes);
  if (retries.length) await ops.reschedule(retries);
  for (const t of transitions) {
    if (!t.result || !t.row.onComplete) continue;
    if (t.onCompleteRefused === undefined) await deliverOnComplete(rt, ops, { ...t.row, ocAttempts: 0 }, t.result, now);
    else await ops.updateOnComplete([{ id: t.row.id, ocState: "failed", ocAttempts: 0, ocRunAt: null, ocError: t.onCompleteRefused }]);
  }
  await ops.addStats(rt.pool, stats);
  return transitions.map((t) => completedEvent(rt, t.row, t.status, now, t.error));
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
    workId: row.id,
    fnName: row.fnName,
    status,
    attempts: row.attempt,
    completedAt: now,
    lagSinceEnqueuedMs: now - row.enqueuedAt,
  };
  if (error !== undefined) event.error = error;
  return event;
}

/** Logs that the result of an attempt that is no longer current was dropped. */
export function warnStaleAttempt<Tx>(rt: PoolRuntime<Tx>, ref: AttemptRef): void {
  rt.logger.warn(
    `workpool: ignoring the result of ${ref.id} attempt ${ref.attempt}: that attempt is no longer current (its lease expired or it was handed back)`,
  );
}

/**
 * Reads the rows of `refs` in the transaction and keeps only those still on that attempt:
 * a result from an attempt whose lease was lost (or that was released) is ignored.
 */
export async function lockCurrentAttempts<Tx>(
  rt: PoolRuntime<Tx>,
  ops: TxOps<Tx>,
  refs: readonly AttemptRef[],
): Promise<Map<string, WorkRow>> {
  const rows = await ops.lockWork(
    rt.pool,
    refs.map((r) => r.id),
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const current = new Map<string, WorkRow>();
  for (const ref of refs) {
    const row = byId.get(ref.id);
    if (row && row.state === "running" && row.attempt === ref.attempt) current.set(ref.id, row);
    else warnStaleAttempt(rt, ref);
  }
  return current;
}
