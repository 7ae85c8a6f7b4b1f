/**
 * The worker of one pool instance: claims due work up to the free slots, runs each
 * attempt, heart-beats the leases of running attempts, and runs maintenance when it is
 * the leader. It wakes on in-store signals (enqueue in this process, NOTIFY on
 * PostgreSQL), on a timer for the next scheduled work, on freed slots, and on a slow
 * safety poll; it never busy-polls.
 */
import type { AttemptRef, ClaimOptions, ClaimResult, WorkRow } from "../driver/driver.js";
import type { TimerHandle } from "../clock.js";
import { Completer, type RefillHook } from "./completer.js";
import { runAction, runMutation } from "./executor.js";
import { AttemptAbort, AttemptAbortedError, type AbortCause } from "./attempt-abort.js";
import { Maintenance } from "./maintenance.js";
import { within } from "./within.js";
import type { PoolRuntime } from "./runtime.js";

/** Most rows one claim statement takes. */
const CLAIM_BATCH = 256;

interface Inflight {
  row: WorkRow;
  abort: AttemptAbort;
  /** Settles when the attempt's result is written (or dropped); null only while begin() sets it. */
  done: Promise<void> | null;
  /** Set (synchronously) once the action's outcome went to the Completer: stop() must not hand it back. */
  submitted: boolean;
  /** Set (synchronously) when stop() hands the attempt back: a late outcome is dropped. */
  handedBack: boolean;
}

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
  /** Whether the store vacuumed its tables (PostgreSQL; see the store's `vacuum` option). */
  vacuumed: boolean;
}

/** Claims and runs work for one pool instance. */
export class Worker<Tx> {
  private readonly completer: Completer<Tx>;
  private readonly maintenance: Maintenance<Tx>;
  private readonly inflight = new Map<string, Inflight>();
  private started = false;
  private stopping = false;
  private wakeRequested = false;
  private pumping: Promise<void> | null = null;
  private pollTimer: TimerHandle | null = null;
  private heartbeatTimer: TimerHandle | null = null;
  private maintenanceTimer: TimerHandle | null = null;
  /** The maintenance tick in flight: stop() waits for it before giving up leadership. */
  private maintaining: Promise<void> | null = null;
  private unsubscribe: (() => void) | null = null;
  /** Keeps the process alive while started (every clock timer is unref'd). */
  private keepAlive: ReturnType<typeof setInterval> | null = null;
  private claimFailures = 0;
  private nextRunAt: number | null = null;
  private saturated = false;
  /** Enqueues in flight that may claim for this worker (see trackEnqueueClaim). */
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
  }

  /** Number of attempts this process is running. */
  get running(): number {
    return this.inflight.size;
  }

  /** Whether start() has been called and stop() has not. */
  get isStarted(): boolean {
    return this.started;
  }

  /** Begins claiming and running work until stop(). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.completer.reopen();
    // A worker process whose only job is `await pool.start()` must not exit on its own.
    this.keepAlive = setInterval(() => undefined, 1 << 30);
    this.unsubscribe = this.rt.driver.subscribe(this.rt.pool, () => this.wake());
    this.scheduleMaintenance(0);
    this.wake();
  }

  /**
   * Stops claiming, waits up to `timeoutMs` for running attempts, then aborts the rest and
   * hands them back to the pool unstarted (no failed attempt is counted).
   */
  async stop(timeoutMs: number): Promise<void> {
    if (!this.started) return;
    this.stopping = true;
    this.currentClaims = new WeakSet();
    this.unsubscribe?.();
    this.unsubscribe = null;
    for (const t of [this.pollTimer, this.maintenanceTimer]) if (t) this.rt.options.clock.clearTimeout(t);
    this.pollTimer = this.maintenanceTimer = null;
    const { clock, leaseMs } = this.rt.options;
    const { logger, pool } = this.rt;
    // The store may be unreachable now. Each step below waits at most leaseMs: by then
    // the leases of the attempts involved have lapsed, they will be rescued, and a late
    // write would be fenced off anyway.
    // First the calls already sent: a claim (whose rows go back unstarted, see
    // applyClaim), an enqueue claiming for this worker (adopt() hands its row back), and
    // a maintenance tick, which would otherwise run on (and might take leadership again)
    // after release() below, perhaps after the store was closed.
    await this.shutdownStep(this.callsInFlight(), () =>
      logger.error(
        `workpool: stop gave up waiting for a claim, enqueue or maintenance call of pool "${pool}" after ${leaseMs} ms; ` +
          "work it claims later goes back to the queue, or is rescued once its lease expires",
      ),
    );
    if (this.inflight.size && timeoutMs > 0) await within(clock, Promise.all([...this.inflight.values()].map((f) => f.done)), timeoutMs);
    await this.shutdownStep(this.handBack(), (e) =>
      logger.error(
        `workpool: stop could not hand back the running attempts of pool "${pool}"; they will be rescued once their leases expire`,
        e,
      ),
    );
    await this.shutdownStep(this.completer.flush(), () => {
      const dropped = this.completer.abandon();
      logger.error(
        `workpool: stop gave up writing ${dropped} result(s) of pool "${pool}" after ${leaseMs} ms; their attempts will be rescued once their leases expire`,
      );
    });
    if (this.heartbeatTimer) clock.clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = null;
    await this.shutdownStep(this.maintenance.release(), (e) =>
      logger.warn("workpool: releasing maintenance leadership failed; it lapses by itself", e),
    );
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = null;
    this.started = false;
  }

  /** Settles when the store calls made before stop() (and their hand-backs) have. */
  private async callsInFlight(): Promise<void> {
    // Loops: a claim that answers meanwhile may start a hand-back.
    for (;;) {
      const calls = [this.pumping, this.maintaining, ...this.enqueueClaims, ...this.lateReleases].filter((c) => c !== null);
      if (!calls.length) return;
      await Promise.all(calls);
    }
  }

  /** Waits at most leaseMs for one step of stop(); calls `failed` if it rejected or took longer. */
  private async shutdownStep(step: Promise<unknown>, failed: (e: unknown) => void): Promise<void> {
    const { clock, leaseMs } = this.rt.options;
    try {
      if (!(await within(clock, step, leaseMs))) failed(new Error(`no answer from the store in ${leaseMs} ms`));
    } catch (e) {
      failed(e);
    }
  }

  /** Aborts still-running actions with cause "shutdown" and releases them in the store. */
  private async handBack(): Promise<void> {
    // Attempts whose outcome is already with the Completer are written by the flush that
    // follows; handing them back would run a finished action again.
    const left = [...this.inflight.values()].filter((f) => f.row.kind === "action" && !f.submitted);
    if (!left.length) return;
    for (const f of left) {
      f.handedBack = true;
      this.abort(f, "shutdown");
    }
    await this.releaseInStore(left.map((f) => f.row));
    for (const f of left) this.inflight.delete(f.row.id);
    this.rt.logger.warn(`workpool: stop handed ${left.length} running attempt(s) of pool "${this.rt.pool}" back to the queue`);
  }

  /**
   * One full step, for tests and scripts: write queued results, run maintenance, claim
   * due work, wait for those attempts to finish and their results to be written.
   */
  async runOnce(): Promise<RunOnceResult> {
    await this.completer.flush();
    const m = await this.maintenance.tick();
    const before = new Set(this.inflight.keys());
    const claimed = await this.claimOnce();
    const mine = [...this.inflight.entries()].filter(([id]) => !before.has(id)).map(([, f]) => f.done);
    await Promise.all(mine);
    await this.completer.flush();
    return { claimed, leader: m.leader, rescued: m.rescued, deleted: m.deleted, vacuumed: m.vacuumed };
  }

  /**
   * The claim an enqueue of this process may make for this worker in its own transaction
   * (see Driver.insertAndClaim), or null: the worker must be running, have room under its
   * local cap, and its last claim must have left the pool below its limit. The store
   * checks the global limit again under the pool's lock.
   */
  enqueueClaimOptions(runAt: number): ClaimOptions | null {
    const now = this.rt.options.clock.now();
    if (!this.started || this.stopping || this.saturated || runAt > now || this.claimLimit() === 0) return null;
    return this.claimOptions(now, 1);
  }

  /**
   * Runs a row that an enqueue of this process claimed for this worker. Should the worker
   * have stopped (or filled up) meanwhile, the attempt is handed back unstarted.
   */
  async adopt(row: WorkRow, now: number): Promise<void> {
    if (this.started && !this.stopping && this.claimLimit() > 0) {
      this.begin(row, now);
      return;
    }
    await this.release([row]);
  }

  /** Puts the current attempts of `rows` back to pending in one transaction, without counting them. */
  private releaseInStore(rows: readonly AttemptRef[]): Promise<void> {
    const refs = rows.map((r) => ({ id: r.id, attempt: r.attempt }));
    const now = this.rt.options.clock.now();
    return this.rt.driver.transaction((ops) => ops.release(refs, now));
  }

  /** Hands claimed rows back to the queue unstarted; on failure their leases expire and they are rescued. */
  private async release(rows: readonly WorkRow[]): Promise<void> {
    try {
      await this.releaseInStore(rows);
    } catch (e) {
      const what = rows.length === 1 ? rows[0]!.id : `${rows.length} claimed attempts`;
      this.rt.logger.error(`workpool: handing back ${what} failed; the leases will expire and the work will be rescued`, e);
    }
  }

  /**
   * Tracks an enqueue that may claim for this worker (from enqueueClaimOptions to adopt):
   * stop() waits for it, so work it claims is started or handed back before the worker
   * (and perhaps the store) goes away.
   */
  trackEnqueueClaim<T>(enqueue: Promise<T>): Promise<T> {
    const settled = enqueue.then(
      () => undefined,
      () => undefined,
    );
    this.enqueueClaims.add(settled);
    void settled.then(() => this.enqueueClaims.delete(settled));
    return enqueue;
  }

  /** Aborts this process's running attempts of `ids` because they were canceled. */
  abortCanceled(ids: readonly string[]): void {
    for (const id of ids) {
      const f = this.inflight.get(id);
      if (f) this.abort(f, "canceled");
    }
  }

  /** Asks for a claim as soon as possible. */
  wake(): void {
    if (!this.started || this.stopping) return;
    this.wakeRequested = true;
    if (!this.pumping) {
      this.pumping = new Promise<void>((r) => setImmediate(r))
        .then(() => this.pump())
        .finally(() => {
          this.pumping = null;
        });
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
    else if (this.nextRunAt !== null && !this.saturated) delay = Math.min(poll, Math.max(0, this.nextRunAt - clock.now()));
    this.pollTimer = clock.setTimeout(() => {
      this.pollTimer = null;
      this.wake();
    }, delay);
  }

  private scheduleMaintenance(delay: number): void {
    const { clock } = this.rt.options;
    this.maintenanceTimer = clock.setTimeout(() => {
      this.maintenanceTimer = null;
      if (this.stopping || !this.started) return;
      this.maintaining = this.maintenance
        .tick()
        .then(
          () => undefined,
          (e: unknown) => this.rt.logger.error(`workpool: maintenance of pool "${this.rt.pool}" failed`, e),
        )
        .finally(() => {
          this.maintaining = null;
          if (!this.stopping && this.started) this.scheduleMaintenance(this.rt.options.maintenanceIntervalMs);
        });
    }, delay);
  }

  /** A claim by this worker at `now` of at most `limit` rows, leased for leaseMs. */
  private claimOptions(now: number, limit: number): ClaimOptions {
    const options = { workerId: this.rt.workerId, now, leaseUntil: now + this.rt.options.leaseMs, limit };
    this.currentClaims.add(options);
    return options;
  }

  /** How many rows the next claim may take (local cap), or 0. */
  private claimLimit(): number {
    const local = this.rt.options.concurrency;
    // The attempts whose results are being written still count against the local cap.
    return local === null ? CLAIM_BATCH : Math.max(0, Math.min(CLAIM_BATCH, local - this.inflight.size));
  }

  private async claimOnce(): Promise<number> {
    const { rt } = this;
    const limit = this.claimLimit();
    // At the local cap: a finishing attempt wakes the worker again.
    if (limit === 0) return 0;
    const now = rt.options.clock.now();
    const options = this.claimOptions(now, limit);
    const res = await rt.driver.claim(rt.pool, options);
    this.applyClaim(res, options, now);
    return res.claimed.length;
  }

  /** Starts the attempts of a claim, or hands them back if stop() began since it was made. */
  private applyClaim(res: ClaimResult, options: ClaimOptions, now: number): void {
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
    for (const row of res.claimed) this.begin(row, now);
  }

  /**
   * The Completer's refill hook: each completion batch of a started worker claims work
   * for the slots it frees in its own transaction, so a busy pool pays one commit per
   * batch instead of two. The claimed attempts start after the commit.
   */
  private readonly refill: RefillHook = {
    claimOptions: (now) => {
      if (!this.started || this.stopping) return null;
      // Completed attempts are still in `inflight` until this commit: the limit is low by
      // at most one batch, which the wake after the commit makes up.
      const limit = this.claimLimit();
      return limit === 0 ? null : this.claimOptions(now, limit);
    },
    claimed: (res, options, now) => {
      if (!res || !options) return false;
      this.applyClaim(res, options, now);
      return res.claimed.length === options.limit || res.running >= res.config.maxParallelism;
    },
  };

  private begin(row: WorkRow, now: number): void {
    const { rt } = this;
    // Built only when someone will see it: this runs for every job.
    if (rt.events.wants("started")) {
      rt.events.emit({
        event: "started",
        pool: rt.pool,
        workId: row.id,
        fnName: row.fnName,
        attempt: row.attempt,
        startedAt: now,
        startLagMs: Math.max(0, now - row.runAt),
      });
    }
    const entry: Inflight = { row, abort: new AttemptAbort(), done: null, submitted: false, handedBack: false };
    // Set before the attempt can settle: the handler starts a microtask later.
    this.inflight.set(row.id, entry);
    entry.done = this.attempt(entry);
    this.ensureHeartbeat();
  }

  /** Runs one attempt, records its result, then frees its slot. */
  private async attempt(entry: Inflight): Promise<void> {
    const { rt } = this;
    const { row } = entry;
    // Whether the completion transaction already claimed work for the freed slot.
    let refilled = false;
    try {
      if (row.kind === "mutation") {
        for (const e of await runMutation(rt, row)) rt.events.emit(e);
      } else {
        const outcome = await runAction(rt, row, entry.abort);
        // null: taken away from this worker (lease lost, shutdown); its result is not written.
        if (outcome && !entry.handedBack) {
          entry.submitted = true;
          refilled = await this.completer.submit(row, outcome);
        }
      }
    } catch (e) {
      rt.logger.error(
        `workpool: attempt ${row.attempt} of ${row.id} could not be recorded; its lease will expire and it will be rescued`,
        e,
      );
    }
    if (this.inflight.get(row.id) === entry) this.inflight.delete(row.id);
    if (this.inflight.size === 0 && this.heartbeatTimer) {
      rt.options.clock.clearTimeout(this.heartbeatTimer);
      this.heartbeatTimer = null;
    }
    // The freed slot needs a claim, unless the completion transaction already made it.
    if (!refilled) this.wake();
  }

  private abort(f: Inflight, cause: AbortCause): void {
    if (f.abort.aborted) return;
    const messages: Record<AbortCause, string> = {
      canceled: "the work was canceled",
      timeout: "timed out",
      lost: "this worker lost the attempt's lease; it was handed to another worker",
      shutdown: "the worker is shutting down; the attempt was handed back to the queue",
    };
    f.abort.abort(new AttemptAbortedError(cause, messages[cause]));
  }

  /**
   * A third of the lease, so two heartbeats may fail before it lapses; at most 5 s, since
   * heartbeats also carry cancel requests from other processes to running attempts.
   */
  private get heartbeatIntervalMs(): number {
    return Math.max(50, Math.min(5000, Math.floor(this.rt.options.leaseMs / 3)));
  }

  private ensureHeartbeat(): void {
    if (this.heartbeatTimer || this.inflight.size === 0) return;
    this.heartbeatTimer = this.rt.options.clock.setTimeout(() => {
      this.heartbeatTimer = null;
      void this.heartbeat().finally(() => this.ensureHeartbeat());
    }, this.heartbeatIntervalMs);
  }

  /** Renews leases of every running attempt in one statement batch; aborts canceled and lost ones. */
  private async heartbeat(): Promise<void> {
    const { rt } = this;
    const entries = [...this.inflight.values()];
    if (!entries.length) return;
    const now = rt.options.clock.now();
    try {
      const res = await rt.driver.heartbeat(
        rt.pool,
        rt.workerId,
        entries.map((f) => ({ id: f.row.id, attempt: f.row.attempt })),
        now + rt.options.leaseMs,
      );
      for (const id of res.cancelRequested) {
        const f = this.inflight.get(id);
        if (f) this.abort(f, "canceled");
      }
      for (const id of res.lost) {
        const f = this.inflight.get(id);
        // A mutation's row is locked by its own transaction; it is not lost.
        if (f && f.row.kind === "action") {
          rt.logger.warn(`workpool: lost the lease of ${id} attempt ${f.row.attempt}; aborting it`);
          this.abort(f, "lost");
        }
      }
    } catch (e) {
      rt.logger.error(`workpool: heartbeat of pool "${rt.pool}" failed; leases expire in ${rt.options.leaseMs} ms unless it recovers`, e);
    }
  }
}
