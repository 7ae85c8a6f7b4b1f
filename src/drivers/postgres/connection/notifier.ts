/**
 * The sending side of wake-ups: coalesces the NOTIFYs of back-to-back enqueues.
 *
 * A NOTIFY is not free: the transaction that sends it takes a database-wide lock at
 * commit and writes to the notification queue, and every listener wakes. An app
 * enqueuing one job at a time would pay that on every commit, although one wake-up
 * every few milliseconds is all the workers need. So, per pool:
 * - an enqueue notifies in its own statement (delivered at its commit) unless one did
 *   in the last {@link NOTIFY_COALESCE_MS};
 * - an enqueue inside that window commits quietly. Workers of the same store in this
 *   process are woken at once. For the others, a quiet commit is covered by the NOTIFY
 *   of any notifying enqueue that *started after it committed* and then committed
 *   itself (its notification is delivered after the quiet work is visible). If none
 *   has done so within {@link NOTIFY_COALESCE_MS} of the oldest uncovered quiet
 *   commit, a trailing `pg_notify` is sent in its own transaction, unless a notifying
 *   enqueue that will cover it is still in flight: then its outcome decides (in a
 *   steady stream the window's notifying enqueue is often still committing when the
 *   window ends, and a trailing NOTIFY then would be an extra commit for nothing).
 *
 * A steady stream of enqueues thus pays for one NOTIFY per window and no extra
 * statement; when the stream stops, its last quiet enqueues get their trailing
 * notification at most one window late.
 *
 * Only enqueues that commit on their own (autocommit) may be quiet: for an enqueue in
 * the caller's transaction nobody here knows when, or whether, it commits, so it always
 * notifies in its statement.
 */

import type { Clock, TimerHandle } from "../../../clock.js";
import { named, type Statement } from "../statements.js";

/** A wake-up of a pool's workers in every process: $1 channel, $2 pool. Sent at the commit of the transaction it runs in. */
export const NOTIFY: Statement = named("SELECT pg_notify($1::text, $2::text)");

/** Window in which one NOTIFY per pool covers every enqueue that commits, ms. */
export const NOTIFY_COALESCE_MS = 5;

/**
 * Monotonic time and Node's own timers. The timer is not unref'd: a process that
 * enqueued and then has nothing else to do still sends its trailing notification.
 */
const monotonicClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

interface PoolState {
  /** When the last NOTIFY was started (in an enqueue's statement, or trailing). */
  lastAt: number;
  /** When the oldest quiet commit not yet known to be covered happened; null if none. */
  uncoveredSince: number | null;
  /** When the latest quiet commit happened. */
  lastQuietAt: number;
  /** How many notifying enqueues have started and not yet settled. */
  inlineInFlight: number;
  /** When the latest of those started (meaningful while inlineInFlight > 0). */
  inlineStartedAt: number;
  trailing: TimerHandle | null;
}

/** Decides which enqueues notify, and sends the trailing notifications. */
export class Notifier {
  private readonly pools = new Map<string, PoolState>();
  private closed = false;
  /** The last failure of a trailing notification, for diagnostics. */
  lastError: Error | null = null;
  /** How many trailing notifications were sent; for tests and diagnostics. */
  trailingSent = 0;

  /**
   * @param send sends one NOTIFY for a pool in its own transaction
   * @param wakeLocal wakes this process's subscribers of a pool
   * @param clock a monotonic clock in ms and its timers (tests pass a ManualClock)
   */
  constructor(
    private readonly send: (pool: string) => Promise<void>,
    private readonly wakeLocal: (pool: string) => void,
    private readonly clock: Clock = monotonicClock,
  ) {}

  private state(pool: string): PoolState {
    let state = this.pools.get(pool);
    if (!state)
      this.pools.set(
        pool,
        (state = {
          lastAt: -Infinity,
          uncoveredSince: null,
          lastQuietAt: -Infinity,
          inlineInFlight: 0,
          inlineStartedAt: -Infinity,
          trailing: null,
        }),
      );
    return state;
  }

  /**
   * For an autocommit enqueue of `pool` starting now: null if it may commit quietly, or
   * the time it started if it must notify in its own statement. Pass that time to
   * {@link committedInline} once it has committed, or call {@link failedInline} if it
   * did not.
   */
  notifyInline(pool: string): number | null {
    const now = this.clock.now();
    if (this.closed) return now;
    const state = this.state(pool);
    if (now - state.lastAt < NOTIFY_COALESCE_MS) return null;
    state.lastAt = now;
    state.inlineInFlight++;
    state.inlineStartedAt = now;
    return now;
  }

  /** A notifying enqueue of `pool` that started at `startedAt` has committed. */
  committedInline(pool: string, startedAt: number): void {
    const state = this.settleInline(pool);
    if (!state) return;
    // It started after every quiet commit so far: its notification covers them all.
    if (state.uncoveredSince !== null && startedAt > state.lastQuietAt) state.uncoveredSince = null;
    // Quiet commits it did not cover may have waited for it past their window.
    this.armTrailing(pool, state);
  }

  /** A notifying enqueue of `pool` failed: it covers nothing, so a trailing notification may be due. */
  failedInline(pool: string): void {
    const state = this.settleInline(pool);
    if (state) this.armTrailing(pool, state);
  }

  private settleInline(pool: string): PoolState | undefined {
    const state = this.pools.get(pool);
    // A closed notifier hands out start times without counting them.
    if (state && state.inlineInFlight > 0) state.inlineInFlight--;
    return state;
  }

  /** True if a notifying enqueue in flight started after the oldest uncovered quiet commit: it will cover it if it commits. */
  private coverInFlight(state: PoolState): boolean {
    return state.inlineInFlight > 0 && state.uncoveredSince !== null && state.inlineStartedAt > state.uncoveredSince;
  }

  /** A quiet enqueue of `pool` has committed: makes sure a NOTIFY follows it. */
  committedQuietly(pool: string): void {
    this.wakeLocal(pool);
    const state = this.state(pool);
    const now = this.clock.now();
    state.lastQuietAt = now;
    state.uncoveredSince ??= now;
    this.armTrailing(pool, state);
  }

  /** Checks again when the oldest uncovered quiet commit is one window old. */
  private armTrailing(pool: string, state: PoolState): void {
    // With a covering enqueue in flight, its committedInline / failedInline re-arms.
    if (state.trailing || state.uncoveredSince === null || this.closed || this.coverInFlight(state)) return;
    // Whole milliseconds: Node keeps one timer list per distinct delay, and a fractional
    // delay would make a new one for every window.
    const delay = Math.max(0, Math.ceil(state.uncoveredSince + NOTIFY_COALESCE_MS - this.clock.now()));
    state.trailing = this.clock.setTimeout(() => {
      state.trailing = null;
      if (state.uncoveredSince === null) return;
      // A notifying enqueue in flight covers it if it commits; it re-arms when it settles.
      if (this.coverInFlight(state)) return;
      // Still uncovered (or uncovered again since the timer was armed): if the oldest is
      // younger than a window, a notifying enqueue may yet cover it.
      if (this.clock.now() - state.uncoveredSince < NOTIFY_COALESCE_MS) {
        this.armTrailing(pool, state);
        return;
      }
      this.sendTrailing(pool, state);
    }, delay);
  }

  private sendTrailing(pool: string, state: PoolState): void {
    // Covers every quiet commit up to now.
    state.uncoveredSince = null;
    state.lastAt = this.clock.now();
    this.trailingSent++;
    // Should this fail, the workers' safety poll finds the work.
    this.send(pool).catch((e: unknown) => {
      this.lastError = e instanceof Error ? e : new Error(String(e));
    });
  }

  /** Sends every pending trailing notification now and stops coalescing. */
  async close(): Promise<void> {
    this.closed = true;
    const pending: Promise<void>[] = [];
    for (const [pool, state] of this.pools) {
      if (state.trailing) this.clock.clearTimeout(state.trailing);
      state.trailing = null;
      if (state.uncoveredSince === null) continue;
      state.uncoveredSince = null;
      pending.push(this.send(pool).catch(() => undefined));
    }
    await Promise.all(pending);
  }
}
