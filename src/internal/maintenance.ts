/**
 * Maintenance, run by one leader per pool (a lease row in the store): rescue attempts
 * whose worker stopped heart-beating, redeliver onComplete handlers that threw, delete
 * finished work past its retention, and write the periodic report.
 */
import type { PoolStats } from "../driver/driver.js";
import type { ReportEvent } from "../events.js";
import { applyTransitions, decide, type Transition } from "./transitions.js";
import { deliverOnComplete } from "./on-complete.js";
import type { PoolRuntime } from "./runtime.js";

const RESCUE_BATCH = 100;
const ON_COMPLETE_BATCH = 50;
const RETENTION_BATCH = 500;
/** Retention deletes at most this many batches per tick, so it never hogs the store. */
const RETENTION_BATCHES_PER_TICK = 4;

/** What one maintenance tick did. */
export interface MaintenanceResult {
  leader: boolean;
  rescued: number;
  onCompleteRetried: number;
  deleted: number;
  reported: boolean;
  /** Whether the store vacuumed its work table (see Driver.vacuum). */
  vacuumed: boolean;
}

/** The maintenance duties of one pool instance (active only while it is the leader). */
export class Maintenance<Tx> {
  private lastStats: PoolStats | null = null;
  private lastReportAt = 0;
  private leader = false;

  constructor(private readonly rt: PoolRuntime<Tx>) {}

  /** How long leadership lasts without renewal: long enough to ride out a slow tick. */
  private get leaderTtlMs(): number {
    return Math.max(5 * this.rt.options.maintenanceIntervalMs, 5000);
  }

  /** Whether this instance held leadership at its last tick. */
  get isLeader(): boolean {
    return this.leader;
  }

  /** One round of maintenance, if this instance is (or becomes) the leader. */
  async tick(): Promise<MaintenanceResult> {
    const { rt } = this;
    const now = rt.options.clock.now();
    const result: MaintenanceResult = { leader: false, rescued: 0, onCompleteRetried: 0, deleted: 0, reported: false, vacuumed: false };
    this.leader = await rt.driver.acquireLeadership(rt.pool, rt.workerId, now, this.leaderTtlMs);
    if (!this.leader) {
      this.lastStats = null;
      return result;
    }
    result.leader = true;
    result.rescued = await this.rescueExpired(now);
    result.onCompleteRetried = await this.retryOnComplete(now);
    result.deleted = await this.deleteExpired(now);
    result.reported = await this.report(now);
    result.vacuumed = await this.vacuum(now);
    return result;
  }

  /** Gives up leadership (on stop). */
  async release(): Promise<void> {
    if (this.leader) await this.rt.driver.releaseLeadership(this.rt.pool, this.rt.workerId);
    this.leader = false;
    this.lastStats = null;
  }

  /** Attempts whose lease ran out count as failed ("worker lost") and retry or fail per their behaviour. */
  private async rescueExpired(now: number): Promise<number> {
    const { rt } = this;
    let total = 0;
    for (;;) {
      const events = await rt.driver.transaction(async (ops) => {
        const rows = await ops.lockExpired(rt.pool, now, RESCUE_BATCH);
        const transitions: Transition[] = rows.map((row) =>
          decide(rt, row, { kind: "failed", error: `worker lost: attempt ${row.attempt} stopped renewing its lease (expired at ${new Date(row.leaseUntil ?? now).toISOString()})`, retryable: true }, now, true),
        );
        return applyTransitions(rt, ops, transitions, now);
      });
      for (const e of events) rt.events.emit(e);
      total += events.length;
      if (events.length) rt.logger.warn(`workpool: rescued ${events.length} attempt(s) of pool "${rt.pool}" whose worker was lost`);
      if (events.length < RESCUE_BATCH) return total;
    }
  }

  private async retryOnComplete(now: number): Promise<number> {
    const { rt } = this;
    return rt.driver.transaction(async (ops) => {
      const rows = await ops.lockOnCompleteDue(rt.pool, now, ON_COMPLETE_BATCH);
      for (const row of rows) await deliverOnComplete(rt, ops, row, JSON.parse(row.result!), now);
      return rows.length;
    });
  }

  private async deleteExpired(now: number): Promise<number> {
    const { rt } = this;
    let deleted = 0;
    for (let i = 0; i < RETENTION_BATCHES_PER_TICK; i++) {
      const n = await rt.driver.deleteFinished(rt.pool, now - rt.options.retentionMs, RETENTION_BATCH);
      deleted += n;
      if (n < RETENTION_BATCH) break;
    }
    if (deleted) rt.logger.debug(`workpool: deleted ${deleted} finished work past retention in pool "${rt.pool}"`);
    return deleted;
  }

  /** Last, since it may take a while on a big table; a failure is logged, not thrown. */
  private async vacuum(now: number): Promise<boolean> {
    const { rt } = this;
    if (!rt.driver.vacuum) return false;
    try {
      const vacuumed = await rt.driver.vacuum(now);
      if (vacuumed) rt.logger.debug(`workpool: vacuumed the work table (leader of pool "${rt.pool}")`);
      return vacuumed;
    } catch (e) {
      rt.logger.warn(`workpool: vacuuming the work table failed (leader of pool "${rt.pool}")`, e);
      return false;
    }
  }

  private async report(now: number): Promise<boolean> {
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
      failureRate: d.completed ? (d.failed + d.retries) / d.completed : 0,
      permanentFailureRate: withoutRetries > 0 ? d.failed / withoutRetries : 0,
      intervalMs,
    };
    rt.events.emit(event);
    return true;
  }
}
