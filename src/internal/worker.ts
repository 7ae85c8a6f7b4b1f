/**
 * The worker of one pool instance: the claim loop. It claims due work up to the free
 * slots and hands each claimed row to the running attempts (attempts.ts). It wakes on
 * in-store signals (an enqueue in this process, NOTIFY on PostgreSQL), on a timer for the
 * next scheduled work, on freed slots, and on a slow safety poll; it never busy-polls.
 * Maintenance runs beside it (maintenance.ts) while it is started.
 */
import { AsyncResource } from "node:async_hooks";
import type { TimerHandle } from "../clock.js";
import type { ClaimOptions, ClaimResult, NewWork, WorkRow } from "../driver/driver.js";
import { Attempts } from "./attempts.js";
import { Completer, type RefillHook } from "./completer.js";
import { Maintenance } from "./maintenance.js";
import { Scheduler } from "../cron/loop.js";
import type { PoolRuntime } from "./runtime.js";
import { stopWorker } from "./stop.js";
import { claimWork } from "./transitions/claim.js";
import { insertAndClaim } from "./transitions/enqueue.js";
import { releaseAttempts } from "./transitions/release.js";
import type { StoreWorker } from "../driver/running-workers.js";

/** Most rows one claim statement takes. */
const CLAIM_BATCH = 256;

/** What {@link Worker.runOnce} did. */
export interface RunOnceResult {
  /** Attempts claimed and run to completion by this call. */
  claimed: number;
  /** Whether this instance is the maintenance leader. */
  leader: boolean;
  /** Attempts rescued from lost workers. */
  rescued: number;
  /** Finished work deleted by retention. */
  deleted: number;
  /** Finished workflow runs deleted by retention. */
  deletedRuns: number;
  /** Whether the store vacuumed its tables (PostgreSQL; see the store's `vacuum` option). */
  vacuumed: boolean;
}

/** Claims and runs work for one pool instance. */
export class Worker<Tx> implements StoreWorker {
  /** @internal The parts stop() takes down, in order (see stop.ts). */
  readonly completer: Completer<Tx>;
  /** @internal */
  readonly maintenance: Maintenance<Tx>;
  /** @internal */
  readonly attempts: Attempts<Tx>;
  /** @internal Enqueues the ticks of the pool's schedules while started. */
  readonly scheduler: Scheduler<Tx>;
  /** The async context the worker's claim loop runs in (the pool's, never a transaction's). */
  private readonly scope = new AsyncResource("workpool.worker");
  private started = false;
  private stopping = false;
  /** The stop() in flight: a second stop() (or the store's close()) waits for it. */
  private stopped: Promise<void> | null = null;
  private wakeRequested = false;
  private pumping: Promise<void> | null = null;
  private pollTimer: TimerHandle | null = null;
  private unsubscribe: (() => void) | null = null;
  /** Keeps the process alive while started (every clock timer is unref'd). */
  private keepAlive: ReturnType<typeof setInterval> | null = null;
  private claimFailures = 0;
  private nextRunAt: number | null = null;
  private saturated = false;
  /** Enqueues in flight that may claim for this worker (see enqueueAndClaim). */
  private readonly enqueueClaims = new Set<Promise<void>>();
  /**
   * The claims made since the last stop() began. A claim that answers after that is not
   * started: its rows go back to the queue (see applyClaim).
   */
  private currentClaims = new WeakSet<ClaimOptions>();
  /** Hand-backs of such late claims in flight; stop() waits for them. */
  private readonly lateReleases = new Set<Promise<void>>();

  constructor(private readonly rt: PoolRuntime<Tx>) {
    this.completer = new Completer(rt, this.refill);
    this.maintenance = new Maintenance(rt);
    this.scheduler = new Scheduler(rt);
    // The freed slot needs a claim, unless the completion transaction already made it.
    this.attempts = new Attempts(rt, this.completer, (refilled) => {
      if (!refilled) this.wake();
    });
  }

  /** Number of attempts this process is running. */
  get running(): number {
    return this.attempts.size;
  }

  /** Begins claiming and running work until stop(). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.completer.reopen();
    // A worker process whose only job is `await pool.start()` must not exit on its own.
    this.keepAlive = setInterval(() => undefined, 1 << 30);
    this.rt.driver.workers.add(this);
    this.unsubscribe = this.rt.driver.subscribe(this.rt.pool, () => this.wake());
    this.maintenance.start();
    this.scheduler.start();
    this.wake();
  }

  /**
   * Stops claiming, waits up to `timeoutMs` for running attempts, then aborts the rest and
   * hands them back to the pool unstarted (no failed attempt is counted).
   */
  stop(timeoutMs: number): Promise<void> {
    if (!this.started) return Promise.resolve();
    this.stopped ??= this.takeDown(timeoutMs).finally(() => {
      this.stopped = null;
    });
    return this.stopped;
  }

  /** The store is closing: stop at once, handing running attempts back (or wait for the stop in flight). */
  stopForClose(): Promise<void> {
    return this.stop(0);
  }

  private async takeDown(timeoutMs: number): Promise<void> {
    this.stopping = true;
    this.currentClaims = new WeakSet();
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.pollTimer) this.rt.options.clock.clearTimeout(this.pollTimer);
    this.pollTimer = null;
    await stopWorker(this.rt, this, timeoutMs);
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = null;
    this.started = false;
    this.rt.driver.workers.delete(this);
  }

  /** @internal Settles when the store calls made before stop() (and their hand-backs) have. */
  async callsInFlight(): Promise<void> {
    // Loops: a claim that answers meanwhile may start a hand-back.
    for (;;) {
      const calls = [this.pumping, ...this.enqueueClaims, ...this.lateReleases].filter((c) => c !== null);
      if (!calls.length) return;
      await Promise.all(calls);
    }
  }

  /**
   * One full step, for tests and scripts: write queued results, run maintenance, enqueue
   * the ticks of due schedules, claim due work, wait for those attempts to finish and
   * their results to be written.
   */
  async runOnce(): Promise<RunOnceResult> {
    await this.completer.flush();
    const m = await this.maintenance.tick();
    await this.scheduler.tick();
    const before = this.attempts.ids();
    const claimed = await this.claimOnce();
    const mine = new Set([...this.attempts.ids()].filter((id) => !before.has(id)));
    await this.attempts.settled(mine);
    await this.completer.flush();
    return { claimed, leader: m.leader, rescued: m.rescued, deleted: m.deleted, deletedRuns: m.deletedRuns, vacuumed: m.vacuumed };
  }

  /**
   * The enqueue fast path: when this worker runs with room under its local cap, its last
   * claim left the pool below its limit and the row is due, the row is inserted and
   * claimed for this worker in one transaction (Driver.insertAndClaim; the store checks
   * the global limit again under the pool's lock) and its attempt starts at once.
   * `inserted` runs once the row is committed, before the attempt starts. Returns null
   * when the worker cannot take the row: the caller inserts it as usual.
   */
  enqueueAndClaim(row: NewWork, inserted: () => void): Promise<void> | null {
    const now = this.rt.options.clock.now();
    if (!this.rt.driver.insertAndClaim || !this.started || this.stopping || this.saturated || row.runAt > now || this.claimLimit() === 0) {
      return null;
    }
    const options = this.claimOptions(1);
    const enqueue = insertAndClaim(this.rt, row, options).then(async (claimed) => {
      inserted();
      if (claimed) await this.adopt(claimed);
    });
    // stop() waits for it, so work it claims is started or handed back before the worker
    // (and perhaps the store) goes away.
    const settled = enqueue.then(
      () => undefined,
      () => undefined,
    );
    this.enqueueClaims.add(settled);
    void settled.then(() => this.enqueueClaims.delete(settled));
    return enqueue;
  }

  /** Runs a row an enqueue claimed for this worker, or hands it back if the worker stopped (or filled up) meanwhile. */
  private async adopt(row: WorkRow): Promise<void> {
    if (this.started && !this.stopping && this.claimLimit() > 0) this.attempts.begin(row, row.startedAt ?? this.rt.options.clock.now());
    else await this.release([row]);
  }

  /** Hands claimed rows back to the queue unstarted; on failure their leases expire and they are rescued. */
  private async release(rows: readonly WorkRow[]): Promise<void> {
    try {
      await releaseAttempts(this.rt, rows);
    } catch (e) {
      const what = rows.length === 1 ? rows[0]!.id : `${rows.length} claimed attempts`;
      this.rt.logger.error(`workpool: handing back ${what} failed; the leases will expire and the work will be rescued`, e);
    }
  }

  /** Aborts this process's running attempts of `ids` because they were canceled. */
  abortCanceled(ids: readonly string[]): void {
    for (const id of ids) this.attempts.abortById(id, "canceled");
  }

  /** Asks for a claim as soon as possible. */
  wake(): void {
    if (!this.started || this.stopping) return;
    this.wakeRequested = true;
    if (!this.pumping) {
      // In the worker's own async context, not the caller's: an enqueue inside a handler's
      // transaction wakes the worker, and its claims must not join that transaction.
      this.pumping = this.scope.runInAsyncScope(() =>
        new Promise<void>((r) => setImmediate(r))
          .then(() => this.pump())
          .finally(() => {
            this.pumping = null;
          }),
      );
    }
  }

  private async pump(): Promise<void> {
    while (this.wakeRequested && !this.stopping) {
      this.wakeRequested = false;
      try {
        const n = await this.claimOnce();
        this.claimFailures = 0;
        // A full batch means more may be due; claim again at once.
        if (n > 0 && n === CLAIM_BATCH) this.wakeRequested = true;
      } catch (e) {
        this.claimFailures++;
        this.rt.logger.error(`workpool: claiming work for pool "${this.rt.pool}" failed (try ${this.claimFailures})`, e);
        break;
      }
    }
    this.schedulePoll();
  }

  /** Sleeps until the next scheduled work, a freed slot, a signal, or the safety poll. */
  private schedulePoll(): void {
    if (this.stopping || !this.started) return;
    const { clock } = this.rt.options;
    if (this.pollTimer) clock.clearTimeout(this.pollTimer);
    const poll = this.rt.options.pollIntervalMs ?? this.rt.driver.pollIntervalMs;
    let delay = poll;
    // After a failed claim (database down): back off from 100 ms, whatever the poll interval.
    if (this.claimFailures) delay = Math.min(30_000, 100 * 2 ** Math.min(this.claimFailures, 9));
    // At the local cap a claim takes nothing (a finishing attempt wakes the worker), so a
    // due nextRunAt must not set the timer: it would fire at once, again and again.
    else if (this.nextRunAt !== null && !this.saturated && this.claimLimit() > 0)
      delay = Math.min(poll, Math.max(0, this.nextRunAt - clock.now()));
    this.pollTimer = clock.setTimeout(() => {
      this.pollTimer = null;
      this.wake();
    }, delay);
  }

  /** A claim by this worker of at most `limit` rows, leased for leaseMs from when the store runs it. */
  private claimOptions(limit: number): ClaimOptions {
    const { clock, leaseMs } = this.rt.options;
    const options = { workerId: this.rt.workerId, clock: () => clock.now(), leaseMs, limit };
    this.currentClaims.add(options);
    return options;
  }

  /** How many rows the next claim may take (local cap), or 0. */
  private claimLimit(): number {
    const local = this.rt.options.concurrency;
    // The attempts whose results are being written still count against the local cap.
    return local === null ? CLAIM_BATCH : Math.max(0, Math.min(CLAIM_BATCH, local - this.attempts.size));
  }

  private async claimOnce(): Promise<number> {
    const limit = this.claimLimit();
    // At the local cap: a finishing attempt wakes the worker again.
    if (limit === 0) return 0;
    const options = this.claimOptions(limit);
    const res = await claimWork(this.rt, options);
    this.applyClaim(res, options);
    return res.claimed.length;
  }

  /** Starts the attempts of a claim, or hands them back if stop() began since it was made. */
  private applyClaim(res: ClaimResult, options: ClaimOptions): void {
    this.rt.logger.level = res.config.logLevel;
    if (!this.currentClaims.has(options)) {
      if (!res.claimed.length) return;
      const release = this.release(res.claimed);
      this.lateReleases.add(release);
      void release.finally(() => this.lateReleases.delete(release));
      return;
    }
    this.nextRunAt = res.nextRunAt;
    this.saturated = res.running >= res.config.maxParallelism;
    for (const row of res.claimed) this.attempts.begin(row, res.now);
  }

  /**
   * The Completer's refill hook: each completion batch of a started worker claims work
   * for the slots it frees in its own transaction, so a busy pool pays one commit per
   * batch instead of two. The claimed attempts start after the commit.
   */
  private readonly refill: RefillHook = {
    claimOptions: () => {
      if (!this.started || this.stopping) return null;
      // Completed attempts are still running here until this commit: the limit is low by
      // at most one batch, which the wake after the commit makes up.
      const limit = this.claimLimit();
      return limit === 0 ? null : this.claimOptions(limit);
    },
    claimed: (res, options) => {
      if (!res || !options) return false;
      this.applyClaim(res, options);
      return res.claimed.length === options.limit || res.running >= res.config.maxParallelism;
    },
  };
}
