/**
 * Group-commits action outcomes: everything that ends while the driver's lanes are busy
 * goes into the next batch, so a busy pool pays one transaction per batch, not per job.
 * Each batch also claims work for the slots it frees, in its own transaction. A driver
 * may allow more than one batch in flight (`completionLanes`: 2 on PostgreSQL), so the
 * process runs the attempts one batch claimed while another is in the database.
 *
 * The writes themselves are the finish transitions (transitions/finish.ts). A batch the
 * store refuses is taken apart here so one bad outcome holds back no other (see refused()).
 */
import type { ClaimOptions, ClaimResult, WorkRow } from "../driver/driver.js";
import type { TimerHandle } from "../clock.js";
import { fallbackLevels, REFUSALS_PER_LEVEL } from "./transitions/fallback.js";
import { finishActions, type FinishEntry } from "./transitions/finish.js";
import type { AttemptOutcome } from "./transitions/outcome.js";
import type { PoolRuntime } from "./runtime.js";

const MAX_BATCH = 500;
/** The queue is split between free lanes only if each gets at least this many results. */
const MIN_SHARE = 16;

interface Pending extends FinishEntry {
  /** Settles once written (or found stale) with whether the batch refilled its freed slots. */
  resolve: (refilled: boolean) => void;
  /** Largest batch it may join: halved each time the store refuses a batch holding it. */
  limit: number;
  /** Refusals of it written alone at its current fallback level. */
  refusals: number;
  /** Not written before this clock time: its own backoff after a refusal. */
  notBefore: number;
}

/** Lets each completion batch claim work for the slots it frees, in its own transaction. */
export interface RefillHook {
  /** The claim to make inside the batch's transaction, or null for none. */
  claimOptions(): ClaimOptions | null;
  /**
   * After the batch committed: what its claim got (null when no claim was made). Returns
   * whether the claim took every slot it could, so the batch's attempts need not wake the
   * worker for another claim.
   */
  claimed(result: ClaimResult | null, options: ClaimOptions | null): boolean;
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
    this.lanes = rt.driver.completionLanes;
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
    const done = await finishActions(this.rt, batch, () => this.hook?.claimOptions() ?? null);
    for (const e of done.events) this.rt.events.emit(e);
    return this.hook?.claimed(done.claim, done.options) ?? false;
  }
}
