/**
 * Time source of a pool. Every deadline (backoff, lease, timeout, retention, polling)
 * is read from and scheduled on the clock, so tests can drive time by hand.
 */

/** Handle returned by {@link Clock.setTimeout}. */
export type TimerHandle = { readonly __timer: true } | object;

/** The time source and timer facility a pool uses. */
export interface Clock {
  /** Current time in epoch milliseconds. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds of this clock's time. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer from {@link Clock.setTimeout}; unknown handles are ignored. */
  clearTimeout(handle: TimerHandle): void;
}

/** The real clock: `Date.now()` and Node timers (unref'd, so they never keep a process alive). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return t;
  },
  clearTimeout(handle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

interface ManualTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that moves only when told to: for deterministic tests of backoff, leases,
 * timeouts and retention. `advance(ms)` fires every timer that falls due, in order.
 */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Set<ManualTimer>();

  /** @param start the initial time in epoch ms (default: the real time now). */
  constructor(start: number = Date.now()) {
    this.current = start;
  }

  /** Current time of this clock. */
  now(): number {
    return this.current;
  }

  /** Schedules `fn` at now + ms of this clock. */
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: ManualTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.add(timer);
    return timer;
  }

  /** Cancels a timer. */
  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as ManualTimer);
  }

  /** Number of timers waiting to fire. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing due timers in time order (each sees its own time). */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance(ms): ms must be a finite number >= 0, got ${ms}`);
    this.set(this.current + ms);
  }

  /** Moves time to `at` (never backwards), firing due timers in order. */
  set(at: number): void {
    const target = Math.max(at, this.current);
    for (;;) {
      let next: ManualTimer | undefined;
      for (const t of this.timers) {
        if (t.at <= target && (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      }
      if (!next) break;
      this.timers.delete(next);
      this.current = Math.max(this.current, next.at);
      next.fn();
    }
    this.current = target;
  }
}
