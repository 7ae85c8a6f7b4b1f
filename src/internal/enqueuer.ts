/**
 * The enqueue path of a pool: checks an enqueue call, writes its rows (inside the
 * caller's transaction, through the worker's enqueue-and-claim fast path, or as a plain
 * insert), traces it when the pool has telemetry, and emits the `enqueued` events.
 */
import type { NewWork } from "../driver/driver.js";
import type { EnqueuedEvent, LogLevel } from "../events.js";
import type { WorkId, WorkKind } from "../types.js";
import { checkBatch, prepareEnqueue, type EnqueueInput, type PreparedEnqueue } from "./enqueue-input.js";
import type { Readiness } from "./readiness.js";
import type { PoolRuntime } from "./runtime.js";
import { insertWork } from "./transitions/enqueue.js";
import { withTrace, workLogLevel } from "./work-meta.js";
import type { Worker } from "./worker.js";

/** Writes a pool's new work. */
export class Enqueuer<Tx> {
  constructor(
    private readonly rt: PoolRuntime<Tx>,
    private readonly worker: Worker<Tx>,
    private readonly readiness: Readiness<Tx>,
  ) {}

  /**
   * Validates, then writes. Bad input rejects the returned promise, except with `tx` on a
   * synchronous store (SQLite): there it throws, so the caller's synchronous
   * `db.transaction()` rolls back instead of committing without the work.
   */
  enqueue(input: EnqueueInput): Promise<WorkId[]> {
    const { options } = input;
    const throwsSync =
      this.rt.driver.synchronousTx && typeof options === "object" && options !== null && (options as { tx?: unknown }).tx !== undefined;
    try {
      const argsList = input.argsField === "argsArray" ? checkBatch(input.argsList) : input.argsList;
      const { rt } = this;
      const ctx = { pool: rt.pool, options: rt.options, handlers: rt.handlers, logger: rt.logger };
      const prepared = prepareEnqueue(ctx, { ...input, argsList });
      return this.rt.tracing.enabled ? this.insertTraced(prepared, input.kind, argsList.length) : this.insert(prepared);
    } catch (e) {
      if (throwsSync) throw e;
      return Promise.reject(e);
    }
  }

  /** Writes the rows inside the enqueue's span, whose trace context each row keeps. */
  private insertTraced(prepared: PreparedEnqueue<Tx>, kind: WorkKind, count: number): Promise<WorkId[]> {
    const first = prepared.rows[0];
    const span = first ? this.rt.tracing.enqueue({ pool: this.rt.pool, handler: first.fnName, kind, count }) : null;
    if (!span) return this.insert(prepared);
    if (span.carrier) {
      const meta = withTrace(first!.meta, span.carrier);
      for (const row of prepared.rows) row.meta = meta;
    }
    try {
      const written = this.insert(prepared);
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
   * Writes the rows. With `tx` on a synchronous store (SQLite) the write happens before
   * this returns, so it joins the caller's synchronous transaction.
   */
  private insert({ rows, tx, idsFor }: PreparedEnqueue<Tx>): Promise<WorkId[]> {
    if (rows.length === 0) return Promise.resolve([]);
    const done = (resolved: readonly string[]): WorkId[] => (this.emitEnqueued(rows, resolved), idsFor(resolved));
    if (tx !== undefined && this.rt.driver.synchronousTx) return insertWork(this.rt, rows, tx).then(done);
    // This process may run a worker with room: the work may start without a second commit.
    // A row with a uniqueKey may resolve to other work, so it takes the plain insert.
    const one = rows.length === 1 && rows[0]!.uniqueKey === null ? rows[0]! : null;
    const fast = tx === undefined && one ? this.worker.enqueueAndClaim(one, () => this.emitEnqueued(rows, [one.id])) : null;
    if (fast) return fast.then(() => idsFor([one!.id]));
    return this.readiness.afterReady(() => insertWork(this.rt, rows, tx)).then(done);
  }

  /**
   * The `enqueued` events of written rows, built only when someone will see them (a batch
   * makes one per row). A row that resolved to pending work with its uniqueKey has one
   * only when it replaced that work; kept work was not enqueued again.
   */
  private emitEnqueued(rows: readonly NewWork[], resolved: readonly string[]): void {
    // The rows of one call share their meta, and so their log level.
    const workLevel = rows[0] ? workLogLevel(rows[0]) : undefined;
    if (!this.rt.events.wants("enqueued", workLevel)) return;
    rows.forEach((r, i) => {
      const workId = resolved[i] ?? r.id;
      const replaced = workId !== r.id;
      if (replaced && r.onConflict === "keep") return;
      const event = enqueuedEvent(this.rt.pool, r, workId as WorkId, workLevel);
      if (replaced) event.replaced = true;
      this.rt.events.emit(event);
    });
  }
}

/** The `enqueued` event of the new row `w`, written as work `workId`, whose own log level is `workLevel`. */
export function enqueuedEvent(pool: string, w: NewWork, workId: WorkId, workLevel: LogLevel | undefined): EnqueuedEvent {
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
