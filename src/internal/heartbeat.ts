/**
 * Heartbeats of this process's running attempts: one statement renews every lease the
 * process holds, and brings back which attempts were canceled (from any process) and
 * which are no longer this worker's (their lease lapsed and they were rescued).
 */
import type { TimerHandle } from "../clock.js";
import type { AttemptRef, WorkRow } from "../driver/driver.js";
import type { PoolRuntime } from "./runtime.js";

/** What the heartbeat needs from the in-flight attempts. */
export interface HeartbeatTarget {
  /** How many attempts are running now. */
  readonly size: number;
  /** The rows of the attempts running now. */
  rows(): WorkRow[];
  /** The work of `ref.id` was canceled: abort its attempt. */
  canceled(ref: AttemptRef): void;
  /**
   * Attempt `ref` is no longer this worker's: abort it if it still runs (its result will be
   * ignored). The answer may arrive after that attempt ended and a newer one began.
   */
  lost(ref: AttemptRef): void;
}

/** Renews the leases of this process's running attempts while there are any. */
export class Heartbeat<Tx> {
  private timer: TimerHandle | null = null;

  constructor(
    private readonly rt: PoolRuntime<Tx>,
    private readonly target: HeartbeatTarget,
  ) {}

  /**
   * A third of the lease, so two heartbeats may fail before it lapses; at most 5 s, since
   * heartbeats also carry cancel requests from other processes to running attempts.
   */
  private get intervalMs(): number {
    return Math.max(50, Math.min(5000, Math.floor(this.rt.options.leaseMs / 3)));
  }

  /** Arms the next heartbeat if attempts are running and none is armed. */
  ensure(): void {
    if (this.timer || this.target.size === 0) return;
    this.timer = this.rt.options.clock.setTimeout(() => {
      this.timer = null;
      void this.beat().finally(() => this.ensure());
    }, this.intervalMs);
  }

  /** Disarms the next heartbeat (no attempt left, or the worker stopped). */
  stop(): void {
    if (this.timer) this.rt.options.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /** Renews every lease in one statement; aborts canceled and lost attempts. */
  private async beat(): Promise<void> {
    const { rt } = this;
    const rows = this.target.rows();
    if (!rows.length) return;
    const { clock, leaseMs } = rt.options;
    try {
      const refs = rows.map((r) => ({ id: r.id, attempt: r.attempt }));
      const res = await rt.driver.heartbeat(rt.pool, rt.workerId, refs, { clock: () => clock.now(), leaseMs });
      for (const ref of res.cancelRequested) this.target.canceled(ref);
      for (const ref of res.lost) this.target.lost(ref);
    } catch (e) {
      rt.logger.error(`workpool: heartbeat of pool "${rt.pool}" failed; leases expire in ${rt.options.leaseMs} ms unless it recovers`, e);
    }
  }
}
