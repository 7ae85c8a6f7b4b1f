/**
 * Writes decided transitions inside a transaction: finished rows (with onComplete
 * delivered in the same transaction) and rows going back to pending to retry, plus the
 * report counters; and the attempt fence every writer of running work applies first.
 */
import type { AttemptRef, FinishWrite, PoolStats, RescheduleWrite, TxOps, WorkRow } from "../../driver/driver.js";
import type { CompletedEvent } from "../../events.js";
import type { PoolRuntime } from "../runtime.js";
import { deliverOnComplete } from "./on-complete.js";
import { attemptEntry, completedEvent, type Transition } from "./outcome.js";
import { runsOnComplete } from "../work-meta.js";

/**
 * Writes transitions inside `ops`' transaction (with the attempt log's record of each
 * attempt that threw), delivers onComplete for finished rows, updates report counters. Returns the events to emit once the transaction commits.
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
      finishes.push({
        id: t.row.id,
        result: JSON.stringify(t.result),
        finishedAt: now,
        ocState: runsOnComplete(t.row, t.result.kind) ? "pending" : "none",
        attemptEntry: attemptEntry(t, now),
      });
      if (t.status === "success") stats.succeeded++;
      else if (t.status === "failed") stats.failed++;
      else stats.canceled++;
    } else {
      retries.push({ id: t.row.id, runAt: t.runAt!, attemptEntry: attemptEntry(t, now) });
      stats.retries++;
    }
  }
  if (finishes.length) await ops.finish(finishes);
  if (retries.length) await ops.reschedule(retries);
  for (const t of transitions) {
    // A runtime without handlers (the admin's) leaves the delivery pending, due now, for a worker of the pool.
    if (!t.result || !runsOnComplete(t.row, t.result.kind) || rt.defersOnComplete) continue;
    if (t.onCompleteRefused === undefined) await deliverOnComplete(rt, ops, { ...t.row, ocAttempts: 0 }, t.result, now);
    else await ops.updateOnComplete([{ id: t.row.id, ocState: "failed", ocAttempts: 0, ocRunAt: null, ocError: t.onCompleteRefused }]);
  }
  await ops.addStats(rt.pool, stats);
  return transitions.map((t) => completedEvent(rt, t.row, t.status, now, t.error));
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
