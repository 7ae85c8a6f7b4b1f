/**
 * The enqueue path of a pool: checks an enqueue call, writes its rows (inside the
 * caller's transaction, through the worker's enqueue-and-claim fast path, or as a plain
 * insert) through the enqueue transition, which traces it and emits its `enqueued` events.
 */
import type { WorkId } from "../types.js";
import { checkBatch, prepareEnqueue, type EnqueueInput, type PreparedEnqueue } from "./enqueue-input.js";
import type { Readiness } from "./readiness.js";
import type { PoolRuntime } from "./runtime.js";
import { emitEnqueued, insertWork, traceEnqueue } from "./transitions/enqueue.js";
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
      return traceEnqueue(this.rt, prepared.rows, { kind: input.kind, count: argsList.length }, () => this.insert(prepared));
    } catch (e) {
      if (throwsSync) throw e;
      return Promise.reject(e);
    }
  }

  /**
   * Writes the rows. With `tx` on a synchronous store (SQLite) the write happens before
   * this returns, so it joins the caller's synchronous transaction.
   */
  private insert({ rows, tx, idsFor }: PreparedEnqueue<Tx>): Promise<WorkId[]> {
    if (rows.length === 0) return Promise.resolve([]);
    const done = (resolved: readonly string[]): WorkId[] => (emitEnqueued(this.rt, rows, resolved), idsFor(resolved));
    if (tx !== undefined && this.rt.driver.synchronousTx) return insertWork(this.rt, rows, tx).then(done);
    // This process may run a worker with room: the work may start without a second commit.
    // A row with a uniqueKey may resolve to other work, so it takes the plain insert.
    const one = rows.length === 1 && rows[0]!.uniqueKey === null ? rows[0]! : null;
    const fast = tx === undefined && one ? this.worker.enqueueAndClaim(one, () => emitEnqueued(this.rt, rows, [one.id])) : null;
    if (fast) return fast.then(() => idsFor([one!.id]));
    return this.readiness.afterReady(() => insertWork(this.rt, rows, tx)).then(done);
  }
}
