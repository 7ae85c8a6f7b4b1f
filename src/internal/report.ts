/**
 * The periodic `report` event of a pool, written by its maintenance leader every
 * `reportIntervalMs` from the store's cumulative counters: what happened since the last
 * report, and the pool's running and backlog counts now.
 */
import type { PoolStats } from "../driver/driver.js";
import type { ReportEvent } from "../events.js";
import type { PoolRuntime } from "./runtime.js";

/** Computes and emits the report while this instance leads. */
export class PoolReporter<Tx> {
  private lastStats: PoolStats | null = null;
  private lastReportAt = 0;

  constructor(private readonly rt: PoolRuntime<Tx>) {}

  /** Forgets the baseline (leadership lost or given up): the next leader's first tick takes a new one. */
  reset(): void {
    this.lastStats = null;
  }

  /** Emits a report if one is due at `now`; the first call as leader only takes the baseline. */
  async report(now: number): Promise<boolean> {
    const { rt } = this;
    if (this.lastStats !== null && now - this.lastReportAt < rt.options.reportIntervalMs) return false;
    const stats = await rt.driver.readStats(rt.pool);
    const previous = this.lastStats;
    const intervalMs = now - this.lastReportAt;
    this.lastStats = stats;
    this.lastReportAt = now;
    // The first tick as leader only takes the baseline.
    if (previous === null) return false;
    const counts = await rt.driver.counts(rt.pool, now);
    const d = {
      completed: stats.completed - previous.completed,
      succeeded: stats.succeeded - previous.succeeded,
      failed: stats.failed - previous.failed,
      retries: stats.retries - previous.retries,
      canceled: stats.canceled - previous.canceled,
    };
    const withoutRetries = d.completed - d.retries;
    const event: ReportEvent = {
      event: "report",
      pool: rt.pool,
      ...d,
      running: counts.running,
      backlog: counts.backlog,
      rateLimited: await rt.driver.countRateLimited(rt.pool, now),
      failureRate: d.completed ? (d.failed + d.retries) / d.completed : 0,
      permanentFailureRate: withoutRetries > 0 ? d.failed / withoutRetries : 0,
      intervalMs,
    };
    rt.events.emit(event);
    return true;
  }
}
