/**
 * Maintenance, run by one leader per pool (a lease row in the store): rescue attempts
 * whose worker stopped heart-beating, redeliver onComplete handlers that threw, delete
 * finished work past its retention, and write the periodic report.
 */
import type { PoolStats, TxOps, WorkRow } from "../driver/driver.js";
import type { CompletedEvent, ReportEvent } from "../events.js";
import { errorText } from "../error-text.js";
import type { RunResult } from "../types.js";
import { fallbackLevels, fallbackTransition, Refusals, refusalReason } from "./fallback.js";
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
  /** Rows whose maintenance writes the store refused, with the fallback level each is at. */
  private readonly refusals = new Refusals();
  /** The last refusal of each such row, for the reason written at a fallback level. */
  private readonly lastRefusal = new Map<string, unknown>();
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
      let events: CompletedEvent[];
      try {
        events = await rt.driver.transaction(async (ops) => {
          const rows = await ops.lockExpired(rt.pool, now, RESCUE_BATCH);
          return applyTransitions(
            rt,
            ops,
            rows.map((row) => this.rescueTransition(row, now)),
            now,
          );
        });
      } catch (e) {
        if (rt.driver.isTransientError(e)) throw e;
        rt.logger.warn(`workpool: the store refused a batch of rescues in pool "${rt.pool}"; rescuing them one by one`, e);
        return total + (await this.rescueOneByOne(now));
      }
      for (const e of events) rt.events.emit(e);
      total += events.length;
      if (events.length) rt.logger.warn(`workpool: rescued ${events.length} attempt(s) of pool "${rt.pool}" whose worker was lost`);
      if (events.length < RESCUE_BATCH) return total;
    }
  }

  /** The transition of an expired attempt, simplified to the fallback level its past refusals reached. */
  private rescueTransition(row: WorkRow, now: number): Transition {
    const { rt } = this;
    const outcome = {
      kind: "failed" as const,
      error: `worker lost: attempt ${row.attempt} stopped renewing its lease (expired at ${new Date(row.leaseUntil ?? now).toISOString()})`,
      retryable: true,
    };
    const t = decide(rt, row, outcome, now, true);
    const level = this.refusals.level(row.id);
    return level ? fallbackTransition(t, level, refusalReason(row.attempt, this.lastRefusal.get(row.id))) : t;
  }

  /** After a refused batch: each expired attempt in a transaction of its own, so one the store refuses holds back no other. */
  private async rescueOneByOne(now: number): Promise<number> {
    const { rt } = this;
    const expired = await rt.driver.transaction((ops) => ops.lockExpired(rt.pool, now, RESCUE_BATCH));
    let done = 0;
    for (const candidate of expired) {
      const events = await this.isolated(candidate, [], () =>
        rt.driver.transaction(async (ops) => {
          const [row] = await ops.lockWork(rt.pool, [candidate.id]);
          if (!row || row.state !== "running" || row.attempt !== candidate.attempt || (row.leaseUntil ?? 0) >= now) return [];
          return applyTransitions(rt, ops, [this.rescueTransition(row, now)], now);
        }),
      );
      for (const e of events) rt.events.emit(e);
      done += events.length;
    }
    return done;
  }

  /** Redelivers onComplete handlers that threw earlier and are due again. */
  private async retryOnComplete(now: number): Promise<number> {
    const { rt } = this;
    try {
      return await rt.driver.transaction(async (ops) => {
        const rows = await ops.lockOnCompleteDue(rt.pool, now, ON_COMPLETE_BATCH);
        for (const row of rows) await this.redeliver(ops, row, now);
        return rows.length;
      });
    } catch (e) {
      if (rt.driver.isTransientError(e)) throw e;
      rt.logger.warn(
        `workpool: the store refused a batch of onComplete redeliveries in pool "${rt.pool}"; redelivering them one by one`,
        e,
      );
      const due = await rt.driver.transaction((ops) => ops.lockOnCompleteDue(rt.pool, now, ON_COMPLETE_BATCH));
      let done = 0;
      for (const candidate of due) {
        done += await this.isolated(candidate, 0, () =>
          rt.driver.transaction(async (ops) => {
            const [row] = await ops.lockWork(rt.pool, [candidate.id]);
            if (!row || row.ocState !== "pending" || (row.ocRunAt ?? 0) > now) return 0;
            await this.redeliver(ops, row, now);
            return 1;
          }),
        );
      }
      return done;
    }
  }

  /** Runs one onComplete again, or (once the store refused its record often enough) marks it failed unrun. */
  private async redeliver(ops: TxOps<Tx>, row: WorkRow, now: number): Promise<void> {
    if (this.refusals.level(row.id) === 0) {
      await deliverOnComplete(this.rt, ops, row, JSON.parse(row.result!) as RunResult, now);
      return;
    }
    const reason = `workpool could not record onComplete's delivery: the store refused it (${errorText(this.lastRefusal.get(row.id))})`;
    await ops.updateOnComplete([{ id: row.id, ocState: "failed", ocAttempts: row.ocAttempts, ocRunAt: null, ocError: reason }]);
  }

  /**
   * Runs `write` for one row. A refusal by the store (not an unreachable store) is
   * counted against the row, which is tried again on later ticks at a higher fallback
   * level; returns `none` for it meanwhile.
   */
  private async isolated<T>(row: WorkRow, none: T, write: () => Promise<T>): Promise<T> {
    try {
      const result = await write();
      this.refusals.clear(row.id);
      this.lastRefusal.delete(row.id);
      return result;
    } catch (e) {
      if (this.rt.driver.isTransientError(e)) throw e;
      const level = this.refusals.refused(row.id, fallbackLevels(row));
      this.lastRefusal.set(row.id, e);
      this.rt.logger.error(`workpool: the store refused maintenance's write of ${row.id} (fallback level ${level})`, e);
      return none;
    }
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
