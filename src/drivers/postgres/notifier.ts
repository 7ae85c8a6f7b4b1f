/**
 * The sending side of wake-ups: coalesces the NOTIFYs of back-to-back enqueues.
 *
 * A NOTIFY is not free: the transaction that sends it takes a database-wide lock at
 * commit and writes to the notification queue, and every listener wakes. An app
 * enqueuing one job at a time would pay that on every commit, although one wake-up
 * every few milliseconds is all the workers need. So, per pool:
 * - an enqueue notifies in its own statement (delivered at its commit) unless one did
 *   in the last {@link NOTIFY_COALESCE_MS};
 * - an enqueue inside that window commits quietly, and once it has committed a single
 *   trailing `pg_notify` follows at the end of the window, covering every quiet enqueue
 *   before it. Workers of the same store in this process are woken at once.
 *
 * Only enqueues that commit on their own (autocommit) may be quiet: for an enqueue in
 * the caller's transaction nobody here knows when, or whether, it commits, so it always
 * notifies in its statement.
 */

/** Window in which one NOTIFY per pool covers every enqueue that commits, ms. */
export const NOTIFY_COALESCE_MS = 5;

interface PoolState {
  /** When the last NOTIFY was sent (in a statement or trailing), on the `now` clock. */
  lastAt: number;
  trailing: ReturnType<typeof setTimeout> | null;
}

/** Decides which enqueues notify, and sends the trailing notifications. */
export class Notifier {
  private readonly pools = new Map<string, PoolState>();
  private closed = false;
  /** The last failure of a trailing notification, for diagnostics. */
  lastError: Error | null = null;

  /**
   * @param send sends one NOTIFY for a pool in its own transaction
   * @param wakeLocal wakes this process's subscribers of a pool
   * @param now a monotonic clock in ms (tests pass their own)
   */
  constructor(
    private readonly send: (pool: string) => Promise<void>,
    private readonly wakeLocal: (pool: string) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Whether an autocommit enqueue of `pool` starting now must notify in its own
   * statement. If so, it is counted as sent.
   */
  notifyInline(pool: string): boolean {
    if (this.closed) return true;
    const now = this.now();
    const state = this.pools.get(pool);
    if (state && now - state.lastAt < NOTIFY_COALESCE_MS) return false;
    if (state) state.lastAt = now;
    else this.pools.set(pool, { lastAt: now, trailing: null });
    return true;
  }

  /** A quiet enqueue of `pool` has committed: makes sure a NOTIFY follows it. */
  committedQuietly(pool: string): void {
    this.wakeLocal(pool);
    const state = this.pools.get(pool);
    // A pending trailing notification fires after this commit, so it covers it.
    if (!state || state.trailing || this.closed) return;
    const delay = Math.max(0, state.lastAt + NOTIFY_COALESCE_MS - this.now());
    state.trailing = setTimeout(() => {
      state.trailing = null;
      state.lastAt = this.now();
      // Should this fail, the workers' safety poll finds the work.
      this.send(pool).catch((e: unknown) => {
        this.lastError = e instanceof Error ? e : new Error(String(e));
      });
    }, delay);
  }

  /** Sends every pending trailing notification now and stops coalescing. */
  async close(): Promise<void> {
    this.closed = true;
    const pending: Promise<void>[] = [];
    for (const [pool, state] of this.pools) {
      if (!state.trailing) continue;
      clearTimeout(state.trailing);
      state.trailing = null;
      pending.push(this.send(pool).catch(() => undefined));
    }
    await Promise.all(pending);
  }
}
