/**
 * The enqueue transition: new work written `pending`, in its own transaction or in the
 * caller's (`tx`), so it exists if and only if that transaction commits. On a store with
 * `insertAndClaim`, an enqueue by a process whose worker has room may write the row
 * already `running` for that worker (the claim transition in the same transaction).
 * A cron tick enqueues through it too: its write is the store's compare-and-set that
 * advances the schedule. Every enqueue builds its rows with newWork() (driver/work-columns.ts), is traced by
 * traceEnqueue() and emits its `enqueued` events with emitEnqueued() once committed.
 */
import type { ClaimOptions, NewWork, WorkRow } from "../../driver/driver.js";
import type { ScheduleAdvance } from "../../driver/schedule-ops.js";
import type { TransactionExecutor } from "../../driver/tx-executor.js";
import type { EnqueuedEvent, LogLevel } from "../../events.js";
import type { WorkId, WorkKind } from "../../types.js";
import type { PoolRuntime } from "../runtime.js";
import { withTrace, workLogLevel } from "../work-meta.js";

/**
 * Runs `write` (the rows' insert) inside the enqueue's span when the pool traces: each row
 * keeps the span's trace context in its meta, and the span ends with the ids written or
 * the error. A synchronous throw of `write` (a `tx` write on SQLite) is thrown again.
 */
export function traceEnqueue<Tx>(
  rt: PoolRuntime<Tx>,
  rows: NewWork[],
  info: { kind: WorkKind; count: number },
  write: () => Promise<WorkId[]>,
): Promise<WorkId[]> {
  const first = rows[0];
  const span = first && rt.tracing.enabled ? rt.tracing.enqueue({ pool: rt.pool, handler: first.fnName, ...info }) : null;
  if (!span) return write();
  if (span.carrier) {
    const meta = withTrace(first!.meta, span.carrier);
    for (const row of rows) row.meta = meta;
  }
  try {
    const written = write();
    written.then(
      (workIds) => span.end({ workIds }),
      (error: unknown) => span.end({ error }),
    );
    return written;
  } catch (error) {
    span.end({ error });
    throw error;
  }
}

/**
 * Writes `rows` pending, inside `tx` when given, and resolves with the id each row stands
 * for (its own, or that of pending work with its uniqueKey). On a store whose `tx` writes
 * are synchronous (SQLite) the rows are written, or an error thrown, before this returns.
 */
export function insertWork<Tx>(rt: PoolRuntime<Tx>, rows: readonly NewWork[], tx: Tx | TransactionExecutor | undefined): Promise<string[]> {
  return rt.driver.insertWork(rows, tx);
}

/**
 * Writes `row` and, when the pool has a free slot and no other due work waits, claims it
 * for `claim.workerId` in the same transaction (see Driver.insertAndClaim). Returns the
 * row as claimed, or null when it was left pending.
 */
export function insertAndClaim<Tx>(rt: PoolRuntime<Tx>, row: NewWork, claim: ClaimOptions): Promise<WorkRow | null> {
  return rt.driver.insertAndClaim!(row, claim);
}

/**
 * Applies a due schedule's step (see ScheduleOps.advanceSchedule): the store writes it,
 * with its tick's work, only if the schedule is still as read. A tick is traced and emits
 * its `enqueued` event as any enqueue does; a step another process applied first writes
 * nothing, and its span ends with no work id. True if the store applied the step.
 */
export async function enqueueTick<Tx>(rt: PoolRuntime<Tx>, step: ScheduleAdvance): Promise<boolean> {
  const work = step.tick?.work;
  if (!work) return rt.driver.advanceSchedule(rt.pool, step);
  const written = await traceEnqueue(rt, [work], { kind: work.kind, count: 1 }, async () =>
    (await rt.driver.advanceSchedule(rt.pool, step)) ? [work.id as WorkId] : [],
  );
  if (!written.length) return false;
  emitEnqueued(rt, [work], written);
  return true;
}

/**
 * The `enqueued` events of written rows, built only when someone will see them (a batch
 * makes one per row). A row that resolved to pending work with its uniqueKey has one
 * only when it replaced that work; kept work was not enqueued again.
 */
export function emitEnqueued<Tx>(rt: PoolRuntime<Tx>, rows: readonly NewWork[], resolved: readonly string[]): void {
  // The rows of one call share their meta, and so their log level.
  const workLevel = rows[0] ? workLogLevel(rows[0]) : undefined;
  if (!rt.events.wants("enqueued", workLevel)) return;
  rows.forEach((r, i) => {
    const workId = resolved[i] ?? r.id;
    const replaced = workId !== r.id;
    if (replaced && r.onConflict === "keep") return;
    const event = enqueuedEvent(rt.pool, r, workId as WorkId, workLevel);
    if (replaced) event.replaced = true;
    rt.events.emit(event);
  });
}

/** The `enqueued` event of the new row `w`, written as work `workId`, whose own log level is `workLevel`. */
function enqueuedEvent(pool: string, w: NewWork, workId: WorkId, workLevel: LogLevel | undefined): EnqueuedEvent {
  const event: EnqueuedEvent = {
    event: "enqueued",
    pool,
    workId,
    fnName: w.fnName,
    kind: w.kind,
    runAt: w.runAt,
    enqueuedAt: w.enqueuedAt,
  };
  if (w.priority !== 0) event.priority = w.priority;
  if (w.key !== null) event.key = w.key;
  if (workLevel !== undefined) event.logLevel = workLevel;
  return event;
}
