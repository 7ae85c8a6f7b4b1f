/**
 * Turns attempt outcomes into state transitions and writes them: finished (with
 * onComplete delivered in the same transaction) or pending again for a retry.
 * Action outcomes are group-committed: everything that ends while a commit is in flight
 * goes into the next one, so a busy pool pays one transaction per batch, not per job.
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
  | { kind: "success"; returnValue: unknown }
  | { kind: "failed"; error: string; retryable: boolean }
  | { kind: "canceled" };

/** What happens to a row: it finishes with `result`, or goes back to pending until `runAt`. */
export interface Transition {
  row: WorkRow;
  status: CompletionStatus;
  result?: RunResult;
  runAt?: number;
  error?: string;
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
    const delay = backoffMs(retry!, row.attempt, rt.options.random);
    const runAt = boundScheduledTime(Math.ceil(now + delay), now, rt.logger);
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
export async function applyTransitions<Tx>(rt: PoolRuntime<Tx>, ops: TxOps<Tx>, transitions: readonly Transition[], now: number): Promise<CompletedEvent[]> {
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
    if (t.result && t.row.onComplete) await deliverOnComplete(rt, ops, { ...t.row, ocAttempts: 0 }, t.result, now);
  }
  await ops.addStats(rt.pool, stats);
  return transitions.map((t) => {
    const event: CompletedEvent = {
      event: "completed",
      pool: rt.pool,
      workId: t.row.id,
      fnName: t.row.fnName,
      status: t.status,
      attempts: t.row.attempt,
      completedAt: now,
      lagSinceEnqueuedMs: now - t.row.enqueuedAt,
    };
    if (t.error !== undefined) event.error = t.error;
    return event;
  });
}

/**
 * Reads the rows of `refs` in the transaction and keeps only those still on that attempt:
 * a result from an attempt whose lease was lost (or that was released) is ignored.
 */
export async function lockCurrentAttempts<Tx>(rt: PoolRuntime<Tx>, ops: TxOps<Tx>, refs: readonly AttemptRef[]): Promise<Map<string, WorkRow>> {
  const rows = await ops.lockWork(rt.pool, refs.map((r) => r.id));
  const byId = new Map(rows.map((r) => [r.id, r]));
  const current = new Map<string, WorkRow>();
  for (const ref of refs) {
    const row = byId.get(ref.id);
    if (row && row.state === "running" && row.attempt === ref.attempt) current.set(ref.id, row);
    else rt.logger.warn(`workpool: ignoring the result of ${ref.id} attempt ${ref.attempt}: that attempt is no longer current (its lease expired or it was handed back)`);
  }
  return current;
}

const MAX_BATCH = 500;

interface Pending {
  ref: AttemptRef;
  outcome: AttemptOutcome;
  resolve: () => void;
}

/**
 * Called inside each completion transaction once its results are written; may claim work
 * for the freed slots in that same transaction. Returns what to do after the commit.
 */
export type InTransactionHook<Tx> = (ops: TxOps<Tx>) => Promise<(() => void) | null>;

/** Group-commits action outcomes. */
export class Completer<Tx> {
  private buffer: Pending[] = [];
  private draining: Promise<void> | null = null;
  private failures = 0;
  private flushScheduled = false;

  constructor(
    private readonly rt: PoolRuntime<Tx>,
    private readonly hook: InTransactionHook<Tx> | null = null,
  ) {}

  /** Queues an outcome; resolves once it is committed (or was found stale). */
  submit(ref: AttemptRef, outcome: AttemptOutcome): Promise<void> {
    return new Promise<void>((resolve) => {
      this.buffer.push({ ref, outcome, resolve });
      this.scheduleFlush();
    });
  }

  /** Writes everything queued; resolves when the queue is empty. */
  flush(): Promise<void> {
    if (!this.draining) {
      this.draining = this.drain().finally(() => {
        this.draining = null;
        // Through the event loop, not at once: results that keep arriving must not chain
        // drains in microtasks forever.
        if (this.buffer.length) this.scheduleFlush();
      });
    }
    return this.draining;
  }

  /**
   * One flush per turn of the event loop, however many results arrive in it: results
   * that arrive meanwhile join the next batch (group commit), and timers and I/O get
   * their turn between batches even when every database call returns at once (SQLite).
   */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      void this.flush();
    });
  }

  /** Number of outcomes waiting to be written. */
  get queued(): number {
    return this.buffer.length;
  }

  private async drain(): Promise<void> {
    let first = true;
    while (this.buffer.length) {
      // On SQLite every await here is already resolved: without a real yield, a busy pool
      // would keep the event loop (timers, heartbeats, the app's I/O) waiting for seconds.
      if (!first) await new Promise<void>((resolve) => setImmediate(resolve));
      first = false;
      const batch = this.buffer.splice(0, MAX_BATCH);
      try {
        await this.commit(batch);
        this.failures = 0;
        for (const p of batch) p.resolve();
      } catch (e) {
        this.buffer.unshift(...batch);
        this.failures++;
        const wait = Math.min(5000, 50 * 2 ** Math.min(this.failures, 10));
        this.rt.logger.error(`workpool: writing ${batch.length} results failed (try ${this.failures}); retrying in ${wait} ms`, e);
        await new Promise<void>((r) => this.rt.options.clock.setTimeout(r, wait));
      }
    }
  }

  private async commit(batch: Pending[]): Promise<void> {
    const rt = this.rt;
    const { events, after } = await rt.driver.transaction(async (ops) => {
      const now = rt.options.clock.now();
      const current = await lockCurrentAttempts(rt, ops, batch.map((p) => p.ref));
      const transitions: Transition[] = [];
      for (const p of batch) {
        const row = current.get(p.ref.id);
        if (row) transitions.push(decide(rt, row, p.outcome, now));
      }
      const events = await applyTransitions(rt, ops, transitions, now);
      return { events, after: this.hook ? await this.hook(ops) : null };
    });
    for (const e of events) rt.events.emit(e);
    after?.();
  }
}
