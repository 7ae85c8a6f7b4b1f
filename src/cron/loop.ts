/**
 * The schedule loop of a started worker: enqueues the ticks of the pool's due schedules.
 * Every started worker of the pool runs it; the store's compare-and-set on each
 * schedule's next tick (ScheduleOps.advanceSchedule) lets exactly one of them enqueue a
 * tick, so no leader is needed and a crashed process loses nothing. Each step goes
 * through the enqueue transition, so a tick is traced and emits `enqueued` as any enqueue.
 */
import type { TimerHandle } from "../clock.js";
import type { PoolRuntime } from "../internal/runtime.js";
import { enqueueTick } from "../internal/transitions/enqueue.js";
import { planStep } from "./tick.js";

/** Most due schedules read at once. */
const DUE_BATCH = 100;
/** How often a worker looks for schedules another process created or changed, ms. */
export const SCHEDULE_POLL_MS = 1000;

/** What one pass enqueued, and when the next schedule of the pool is due. */
export interface SchedulePass {
  enqueued: number;
  nextAt: number | null;
}

/** Enqueues due ticks of one pool's schedules, on a timer while started. */
export class Scheduler<Tx> {
  private timer: TimerHandle | null = null;
  private started = false;
  private pass: Promise<SchedulePass> | null = null;
  private failures = 0;

  constructor(private readonly rt: PoolRuntime<Tx>) {}

  /** Begins looking for due schedules until stop(). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.fire();
  }

  /** Stops the timer and waits for a pass in flight. */
  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) this.rt.options.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.pass?.catch(() => undefined);
  }

  /** Looks again soon (a schedule of this pool was written in this process). */
  wake(): void {
    if (!this.started || this.pass) return;
    if (this.timer) this.rt.options.clock.clearTimeout(this.timer);
    this.timer = this.rt.options.clock.setTimeout(() => this.fire(), 0);
  }

  /** One pass: enqueues the tick of every schedule due now. Concurrent calls share one pass. */
  tick(): Promise<SchedulePass> {
    this.pass ??= this.runPass().finally(() => {
      this.pass = null;
    });
    return this.pass;
  }

  private fire(): void {
    this.timer = null;
    if (!this.started) return;
    this.tick().then(
      (res) => {
        this.failures = 0;
        this.arm(res.nextAt);
      },
      (e: unknown) => {
        this.failures++;
        this.rt.logger.error(`workpool: enqueuing the due schedules of pool "${this.rt.pool}" failed (try ${this.failures})`, e);
        this.arm(null, Math.min(30_000, 100 * 2 ** Math.min(this.failures, 9)));
      },
    );
  }

  /** Sleeps until the next schedule is due, or the poll for other processes' schedules. */
  private arm(nextAt: number | null, delay = SCHEDULE_POLL_MS): void {
    if (!this.started) return;
    const { clock } = this.rt.options;
    if (this.timer) clock.clearTimeout(this.timer);
    const wait = nextAt === null ? delay : Math.min(delay, Math.max(0, nextAt - clock.now()));
    this.timer = clock.setTimeout(() => this.fire(), wait);
  }

  private async runPass(): Promise<SchedulePass> {
    const { driver, pool, options } = this.rt;
    let enqueued = 0;
    // A step refused by the store (another process took the tick, or the schedule changed)
    // is read again; a schedule another process advanced is then no longer due.
    for (let round = 0; ; round++) {
      const now = options.clock.now();
      const read = await driver.dueSchedules(pool, now, DUE_BATCH);
      let nextAt = read.nextAt;
      let again = read.due.length === DUE_BATCH;
      for (const s of read.due) {
        const step = planStep(pool, s, now);
        nextAt = nextAt === null ? step.nextRunAt : Math.min(nextAt, step.nextRunAt);
        if (!(await enqueueTick(this.rt, step))) {
          again = true;
          continue;
        }
        if (step.tick) enqueued++;
      }
      if (!again || round >= 10) return { enqueued, nextAt: again ? now : nextAt };
    }
  }
}
