/**
 * Group-commits action outcomes: everything that ends while the driver's lanes are busy
 * goes into the next batch, so a busy pool pays one transaction per batch, not per job.
 * Each batch also claims work for the slots it frees, in its own transaction. A driver
 * may allow more than one batch in flight (`completionLanes`: 2 on PostgreSQL), so the
 * process runs the attempts one batch claimed while another is in the database.
 *
 * A batch whose work has no onComplete handler needs no code of ours inside the
 * transaction, so when the driver has `complete` it is written in one call (on
 * PostgreSQL, one statement and one round trip). Otherwise the batch runs as a
 * transaction of steps: lock the rows, write the transitions, deliver onComplete, claim.
 */
import type { ClaimOptions, ClaimResult, CompletionWrite, WorkRow } from "../driver/driver.js";
import type { CompletedEvent } from "../events.js";
import type { PoolRuntime } from "./runtime.js";
import { applyTransitions, completedEvent, decide, lockCurrentAttempts, warnStaleAttempt, type AttemptOutcome, type Transition } from "./transitions.js";

const MAX_BATCH = 500;
/** The queue is split between free lanes only if each gets at least this many results. */
const MIN_SHARE = 16;

interface Pending {
  /** The row as claimed: the attempt the outcome belongs to. */
  row: WorkRow;
  outcome: AttemptOutcome;
  /** Settles once written (or found stale) with whether the batch refilled its freed slots. */
  resolve: (refilled: boolean) => void;
}

/** Lets each completion batch claim work for the slots it frees, in its own transaction. */
export interface RefillHook {
  /** The claim to make inside the batch's transaction at `now`, or null for none. */
  claimOptions(now: number): ClaimOptions | null;
  /**
   * After the batch committed: what its claim got (null when no claim was made). Returns
   * whether the claim took every slot it could, so the batch's attempts need not wake the
   * worker for another claim.
   */
  claimed(result: ClaimResult | null, options: ClaimOptions | null, now: number): boolean;
}

/** What one committed batch produced. */
interface Committed {
  events: CompletedEvent[];
  claim: ClaimResult | null;
  options: ClaimOptions | null;
  now: number;
}

/** Group-commits action outcomes. */
export class Completer<Tx> {
  private buffer: Pending[] = [];
  /** Batches being written now (at most `lanes`). */
  private writing = 0;
  private failures = 0;
  /** Set while waiting to retry after a failed write: no batch starts meanwhile. */
  private backingOff = false;
  private flushScheduled = false;
  /** Set by abandon(): failed writes are dropped instead of retried. */
  private closed = false;
  /** flush() callers waiting for the queue to empty. */
  private idle: (() => void)[] = [];
  private readonly lanes: number;

  constructor(
    private readonly rt: PoolRuntime<Tx>,
    private readonly hook: RefillHook | null = null,
  ) {
    this.lanes = Math.max(1, Math.floor(rt.driver.completionLanes ?? 1));
  }

  /**
   * Queues the outcome of `row`'s current attempt. Resolves once it is committed (or was
   * found stale) with whether its batch claimed work for every slot it could.
   */
  submit(row: WorkRow, outcome: AttemptOutcome): Promise<boolean> {
    // Abandoned (a stop gave up on an unreachable store): the lease decides what happens.
    if (this.closed) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      this.buffer.push({ row, outcome, resolve });
      this.scheduleFlush();
    });
  }

  /** Writes everything queued; resolves when nothing is queued or being written. */
  flush(): Promise<void> {
    this.startBatches();
    if (!this.buffer.length && this.writing === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.idle.push(resolve));
  }

  /**
   * Drops every queued outcome (each submit() settles with false) and stops retrying
   * failed writes, until reopen(). A write already in the database may still commit.
   * Returns how many outcomes were dropped.
   */
  abandon(): number {
    this.closed = true;
    const dropped = this.buffer.splice(0);
    for (const p of dropped) p.resolve(false);
    for (const resolve of this.idle.splice(0)) resolve();
    return dropped.length;
  }

  /** Accepts and writes outcomes again after abandon(). */
  reopen(): void {
    this.closed = false;
  }

  /** Number of outcomes waiting to be written. */
  get queued(): number {
    return this.buffer.length;
  }

  /**
   * One start per turn of the event loop, however many results arrive in it: results
   * that arrive meanwhile join the next batch (group commit), and timers and I/O get
   * their turn between batches even when every database call returns at once (SQLite).
   */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.startBatches();
    });
  }

  /**
   * Starts batches while there are results and a free lane. With two lanes and none busy,
   * the queue is split in two, so the two halves come back (and their claimed attempts
   * run here) while the other half is still in the database.
   */
  private startBatches(): void {
    while (this.buffer.length && this.writing < this.lanes && !this.backingOff && !this.closed) {
      const free = this.lanes - this.writing;
      const share = Math.ceil(this.buffer.length / free);
      const size = Math.min(MAX_BATCH, share < MIN_SHARE ? this.buffer.length : share);
      const batch = this.buffer.splice(0, size);
      this.writing++;
      void this.write(batch).finally(() => {
        this.writing--;
        // Through the event loop, not at once: results that keep arriving must not chain
        // writes in microtasks forever.
        if (this.buffer.length) this.scheduleFlush();
        else if (this.writing === 0) for (const resolve of this.idle.splice(0)) resolve();
      });
    }
  }

  /** Writes one batch; on failure puts it back and waits (with backoff) before the next try. */
  private async write(batch: Pending[]): Promise<void> {
    try {
      const refilled = await this.commit(batch);
      this.failures = 0;
      for (const p of batch) p.resolve(refilled);
    } catch (e) {
      if (this.closed) {
        for (const p of batch) p.resolve(false);
        return;
      }
      this.buffer.unshift(...batch);
      this.failures++;
      if (this.backingOff) return;
      this.backingOff = true;
      const wait = Math.min(5000, 50 * 2 ** Math.min(this.failures, 10));
      this.rt.logger.error(`workpool: writing ${batch.length} results failed (try ${this.failures}); retrying in ${wait} ms`, e);
      await new Promise<void>((r) => this.rt.options.clock.setTimeout(r, wait));
      this.backingOff = false;
    }
  }

  /** Writes one batch; returns whether its claim refilled the slots it freed. */
  private async commit(batch: Pending[]): Promise<boolean> {
    const oneCall = this.rt.driver.complete !== undefined && batch.every((p) => p.row.onComplete === null);
    const done = oneCall ? await this.commitInOneCall(batch) : await this.commitInTransaction(batch);
    for (const e of done.events) this.rt.events.emit(e);
    return this.hook?.claimed(done.claim, done.options, done.now) ?? false;
  }

  /**
   * The driver's `complete`: the transitions are decided here from the rows as claimed
   * (their attempt, kind and retry behaviour cannot change while the attempt is current);
   * the store fences each write by attempt and lets a requested cancel win.
   */
  private async commitInOneCall(batch: Pending[]): Promise<Committed> {
    const { rt } = this;
    const now = rt.options.clock.now();
    const transitions = batch.map((p) => decide(rt, p.row, p.outcome, now));
    const writes: CompletionWrite[] = transitions.map((t) => ({
      id: t.row.id,
      attempt: t.row.attempt,
      status: t.status,
      result: t.result ? JSON.stringify(t.result) : null,
      runAt: t.runAt ?? null,
    }));
    const options = this.hook?.claimOptions(now) ?? null;
    const res = await rt.driver.complete!(rt.pool, writes, now, options);
    const stale = new Set(res.stale);
    const canceled = new Set(res.canceled);
    const events: CompletedEvent[] = [];
    // Events are built only when someone will see them: this runs for every job.
    const wanted = rt.events.wants("completed");
    for (const t of transitions) {
      if (stale.has(t.row.id)) warnStaleAttempt(rt, t.row);
      else if (!wanted) continue;
      else if (canceled.has(t.row.id)) events.push(completedEvent(rt, t.row, "canceled", now));
      else events.push(completedEvent(rt, t.row, t.status, now, t.error));
    }
    return { events, claim: res.claim, options, now };
  }

  /** A transaction of steps, for batches with onComplete handlers to run inside it. */
  private async commitInTransaction(batch: Pending[]): Promise<Committed> {
    const rt = this.rt;
    return rt.driver.transaction(async (ops) => {
      const now = rt.options.clock.now();
      const current = await lockCurrentAttempts(rt, ops, batch.map((p) => p.row));
      const transitions: Transition[] = [];
      for (const p of batch) {
        const row = current.get(p.row.id);
        if (row) transitions.push(decide(rt, row, p.outcome, now));
      }
      const events = await applyTransitions(rt, ops, transitions, now);
      const options = ops.claim ? (this.hook?.claimOptions(now) ?? null) : null;
      const claim = options ? await ops.claim!(rt.pool, options) : null;
      return { events, claim, options, now };
    });
  }
}
