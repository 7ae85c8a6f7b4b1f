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
import type { TimerHandle } from "../clock.js";
import type { CompletedEvent } from "../events.js";
import { fallbackLevels, fallbackTransition, refusalReason, REFUSALS_PER_LEVEL } from "./fallback.js";
import type { PoolRuntime } from "./runtime.js";
import {
  applyTransitions,
  completedEvent,
  decide,
  lockCurrentAttempts,
  warnStaleAttempt,
  type AttemptOutcome,
  type Transition,
} from "./transitions.js";

const MAX_BATCH = 500;
/** The queue is split between free lanes only if each gets at least this many results. */
const MIN_SHARE = 16;

interface Pending {
  /** The row as claimed: the attempt the outcome belongs to. */
  row: WorkRow;
  outcome: AttemptOutcome;
  /** Settles once written (or found stale) with whether the batch refilled its freed slots. */
  resolve: (refilled: boolean) => void;
  /** Largest batch it may join: halved each time the store refuses a batch holding it. */
  limit: number;
  /** Refusals of it written alone at its current fallback level. */
  refusals: number;
  /** Its fallback level (see fallback.ts); 0: the outcome as it is. */
  level: number;
  /** Not written before this clock time: its own backoff after a refusal. */
  notBefore: number;
  /** What the store said the last time it refused it. */
  lastError?: unknown;
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
  /** Set while a queued result's batch was refused (its limit is below MAX_BATCH): batches are then picked with care. */
  private careful = false;
  /** Wakes the writer when a result waiting out its own backoff is due. */
  private retryTimer: TimerHandle | null = null;
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
      this.buffer.push({ row, outcome, resolve, limit: MAX_BATCH, refusals: 0, level: 0, notBefore: 0 });
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
    this.careful = false;
    if (this.retryTimer) this.rt.options.clock.clearTimeout(this.retryTimer);
    this.retryTimer = null;
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
      const batch = this.careful ? this.takeCarefully(size) : this.buffer.splice(0, size);
      if (!batch.length) break;
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

  /**
   * Takes the next batch while some results are isolated (a batch holding them was
   * refused): results not yet due wait, and each result joins a batch no larger than
   * its own limit.
   */
  private takeCarefully(size: number): Pending[] {
    const now = this.rt.options.clock.now();
    const batch: Pending[] = [];
    let cap = size;
    for (let i = 0; i < this.buffer.length && batch.length < cap;) {
      const p = this.buffer[i]!;
      if (p.notBefore > now || p.limit <= batch.length) {
        i++;
        continue;
      }
      cap = Math.min(cap, p.limit);
      batch.push(p);
      this.buffer.splice(i, 1);
    }
    this.careful = this.buffer.some((p) => p.limit < MAX_BATCH);
    this.armRetryTimer(now);
    return batch;
  }

  /** Wakes the writer when the earliest result waiting out its own backoff is due. */
  private armRetryTimer(now: number): void {
    if (this.retryTimer || this.closed) return;
    let next = Infinity;
    for (const p of this.buffer) if (p.notBefore > now) next = Math.min(next, p.notBefore);
    if (next === Infinity) return;
    this.retryTimer = this.rt.options.clock.setTimeout(() => {
      this.retryTimer = null;
      this.startBatches();
    }, next - now);
  }

  /** Writes one batch; on failure puts it back, to be retried (see failed()). */
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
      if (this.rt.driver.isTransientError(e)) await this.unreachable(batch, e);
      else this.refused(batch, e);
    }
  }

  /** The store could not be reached: the whole queue waits (with backoff) before the next try. */
  private async unreachable(batch: Pending[], e: unknown): Promise<void> {
    this.buffer.unshift(...batch);
    this.failures++;
    if (this.backingOff) return;
    this.backingOff = true;
    const wait = Math.min(5000, 50 * 2 ** Math.min(this.failures, 10));
    this.rt.logger.error(`workpool: writing ${batch.length} results failed (try ${this.failures}); retrying in ${wait} ms`, e);
    await new Promise<void>((r) => this.rt.options.clock.setTimeout(r, wait));
    this.backingOff = false;
  }

  /**
   * The store refused the batch: something in it cannot be written. A batch is split in
   * halves until the result at fault is alone; a result refused alone is retried after
   * its own backoff, then written at the next fallback level (see fallback.ts), and
   * dropped once every level was refused: its lease then expires and maintenance
   * finishes it. The other results are written meanwhile.
   */
  private refused(batch: Pending[], e: unknown): void {
    const { logger } = this.rt;
    if (batch.length > 1) {
      const half = Math.floor(batch.length / 2);
      for (const p of batch) p.limit = Math.min(p.limit, half);
      this.buffer.unshift(...batch);
      this.careful = true;
      logger.warn(`workpool: the store refused a batch of ${batch.length} results; writing it in halves to find the one it refuses`, e);
      return;
    }
    const p = batch[0]!;
    const { id, attempt } = p.row;
    p.lastError = e;
    if (++p.refusals >= REFUSALS_PER_LEVEL) {
      p.level++;
      p.refusals = 0;
    }
    if (p.level > fallbackLevels(p.row)) {
      logger.error(
        `workpool: the store refused every way of recording attempt ${attempt} of ${id}; dropping it: its lease will expire and maintenance will finish it`,
        e,
      );
      p.resolve(false);
      return;
    }
    p.limit = 1;
    this.careful = true;
    const now = this.rt.options.clock.now();
    p.notBefore = now + Math.min(5000, 100 * 2 ** (p.refusals + p.level));
    this.buffer.push(p);
    logger.error(
      `workpool: the store refused the outcome of attempt ${attempt} of ${id}; retrying it alone${p.level ? ` at fallback level ${p.level}` : ""}`,
      e,
    );
  }

  /** Writes one batch; returns whether its claim refilled the slots it freed. */
  private async commit(batch: Pending[]): Promise<boolean> {
    const oneCall = this.rt.driver.complete !== undefined && batch.every((p) => p.row.onComplete === null && p.level === 0);
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
      const current = await lockCurrentAttempts(
        rt,
        ops,
        batch.map((p) => p.row),
      );
      const transitions: Transition[] = [];
      for (const p of batch) {
        const row = current.get(p.row.id);
        if (!row) continue;
        const t = decide(rt, row, p.outcome, now);
        transitions.push(p.level ? fallbackTransition(t, p.level, refusalReason(row.attempt, p.lastError)) : t);
      }
      const events = await applyTransitions(rt, ops, transitions, now);
      const options = ops.claim ? (this.hook?.claimOptions(now) ?? null) : null;
      const claim = options ? await ops.claim!(rt.pool, options) : null;
      return { events, claim, options, now };
    });
  }
}
