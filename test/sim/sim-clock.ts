/**
 * Time in a simulated run: one ManualClock for every process, moved only by the
 * scheduler. Each process sees it through a view whose timers die with the process (a
 * crashed process never runs again) and whose pending timers the scheduler can list, so
 * it can jump straight to the next one.
 */
import { ManualClock, type Clock, type TimerHandle } from "../../src/clock.js";

interface ViewTimer {
  at: number;
  inner: TimerHandle;
}

/** The shared clock of a run and the timers every process set on it. */
export class SimTime {
  readonly clock: ManualClock;
  private readonly timers = new Set<ViewTimer>();

  constructor(readonly start: number) {
    this.clock = new ManualClock(start);
  }

  /** Current time. */
  now(): number {
    return this.clock.now();
  }

  /** A process's view: its timers fire only while `alive()` says so. */
  view(alive: () => boolean, onTimer: () => void, onSet: (ms: number) => void = () => undefined): Clock {
    return {
      now: () => this.clock.now(),
      setTimeout: (fn, ms) => {
        onSet(ms);
        const t: ViewTimer = { at: this.clock.now() + Math.max(0, ms), inner: null as unknown as TimerHandle };
        t.inner = this.clock.setTimeout(() => {
          this.timers.delete(t);
          if (!alive()) return;
          onTimer();
          fn();
        }, ms);
        this.timers.add(t);
        return t;
      },
      clearTimeout: (handle) => {
        const t = handle as ViewTimer;
        if (!this.timers.delete(t)) return;
        this.clock.clearTimeout(t.inner);
      },
    };
  }

  /** When the earliest pending timer fires, or null when none is set. */
  nextTimerAt(): number | null {
    let next: number | null = null;
    for (const t of this.timers) if (next === null || t.at < next) next = t.at;
    return next;
  }

  /** Moves time forward by `ms`, firing due timers in order. */
  advance(ms: number): void {
    this.clock.advance(ms);
  }
}
