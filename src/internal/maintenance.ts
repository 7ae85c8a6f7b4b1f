/**
 * Maintenance, run by one leader per pool (a lease row in the store): rescue attempts
 * whose worker stopped heart-beating, redeliver onComplete handlers that threw, delete
 * finished work past its retention, write the periodic report, and let the store vacuum.
 * Every instance ticks on its own timer; only the leader of the moment does the work, but
 * every instance runs its own duties first (instance-duties.ts).
 */
import type { TimerHandle } from "../clock.js";
import { stopInstanceDuties, tickInstanceDuties } from "./instance-duties.js";
import { Refusals } from "./transitions/fallback.js";
import { redeliverDue } from "./transitions/on-complete.js";
import { rescueExpired } from "./transitions/rescue.js";
import { deleteExpired, deleteExpiredRuns } from "./transitions/retention.js";
import { PoolReporter } from "./report.js";
import type { PoolRuntime } from "./runtime.js";

/** What one maintenance tick did. */
export interface MaintenanceResult {
  leader: boolean;
  rescued: number;
  onCompleteRetried: number;
  deleted: number;
  /** Finished workflow runs deleted by retention. */
  deletedRuns: number;
  reported: boolean;
  /** Whether the store vacuumed its work table (see Driver.vacuum). */
  vacuumed: boolean;
}

/** The maintenance duties of one pool instance (active only while it is the leader). */
export class Maintenance<Tx> {
  private leader = false;
  private timer: TimerHandle | null = null;
  private running = false;
  /** The tick in flight, if any: stop() waits for it before giving up leadership. */
  private ticking: Promise<void> | null = null;
  /** Rows whose maintenance writes the store refused (see fallback.ts). */
  private readonly refusals = new Refusals();
  private readonly reporter: PoolReporter<Tx>;

  constructor(private readonly rt: PoolRuntime<Tx>) {
    this.reporter = new PoolReporter(rt);
  }

  /** How long leadership lasts without renewal: long enough to ride out a slow tick. */
  private get leaderTtlMs(): number {
    return Math.max(5 * this.rt.options.maintenanceIntervalMs, 5000);
  }

  /** Whether this instance held leadership at its last tick. */
  get isLeader(): boolean {
    return this.leader;
  }

  /** Ticks now and then every maintenanceIntervalMs, until stop(). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /**
   * Stops ticking. Resolves once a tick in flight has ended (a failed tick was already
   * logged); leadership is kept until release().
   */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) this.rt.options.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
  }

  private schedule(delay: number): void {
    const { clock } = this.rt.options;
    this.timer = clock.setTimeout(() => {
      this.timer = null;
      if (!this.running) return;
      this.ticking = this.tick()
        .then(
          () => undefined,
          (e: unknown) => this.rt.logger.error(`workpool: maintenance of pool "${this.rt.pool}" failed`, e),
        )
        .finally(() => {
          this.ticking = null;
          if (this.running) this.schedule(this.rt.options.maintenanceIntervalMs);
        });
    }, delay);
  }

  /** One round of maintenance, if this instance is (or becomes) the leader. */
  async tick(): Promise<MaintenanceResult> {
    const { rt } = this;
    const now = rt.options.clock.now();
    const result: MaintenanceResult = {
      leader: false,
      rescued: 0,
      onCompleteRetried: 0,
      deleted: 0,
      deletedRuns: 0,
      reported: false,
      vacuumed: false,
    };
    await tickInstanceDuties(rt, now);
    this.leader = await rt.driver.acquireLeadership(rt.pool, rt.workerId, now, this.leaderTtlMs);
    if (!this.leader) {
      this.reporter.reset();
      return result;
    }
    result.leader = true;
    const rescued = await rescueExpired(rt, this.refusals, now);
    for (const e of rescued) rt.events.emit(e);
    if (rescued.length) rt.logger.warn(`workpool: rescued ${rescued.length} attempt(s) of pool "${rt.pool}" whose worker was lost`);
    result.rescued = rescued.length;
    result.onCompleteRetried = await redeliverDue(rt, this.refusals, now);
    result.deleted = await deleteExpired(rt, now);
    result.deletedRuns = await deleteExpiredRuns(rt, now);
    result.reported = await this.reporter.report(now);
    result.vacuumed = await this.vacuum(now);
    return result;
  }

  /** Gives up leadership, and ends the duties of this instance (on stop). */
  async release(): Promise<void> {
    await stopInstanceDuties(this.rt);
    if (this.leader) await this.rt.driver.releaseLeadership(this.rt.pool, this.rt.workerId);
    this.leader = false;
    this.reporter.reset();
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
}
