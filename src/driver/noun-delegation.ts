/**
 * The part of a driver that only hands calls on: pool, schedule, admin and bulk-retry calls go to the
 * driver's object for that noun. Both drivers extend it, so the hand-off is written once;
 * what a driver does itself (work rows, transactions, the store as a whole) stays in it.
 */
import type { AdminOps } from "./admin-ops.js";
import type { PoolOps } from "./pool-ops.js";
import type { RedriveOps } from "./redrive-ops.js";
import type { ScheduleOps } from "./schedule-ops.js";

type Args<K extends keyof T, T> = T[K] extends (...a: infer A) => unknown ? A : never;

/** A driver's pool, schedule and admin calls, each handed to the object of its noun. */
export abstract class NounDelegation implements PoolOps, ScheduleOps, AdminOps, RedriveOps {
  /** The driver's pools (pools.ts). */
  protected abstract readonly pools: PoolOps;
  /** The driver's schedules (schedules.ts). */
  protected abstract readonly schedules: ScheduleOps;
  /** The driver's admin reads (admin.ts). */
  protected abstract readonly admin: AdminOps;
  /** The driver's bulk retry (redrive.ts). */
  protected abstract readonly redrives: RedriveOps;

  // PoolOps.

  acquireLeadership(...a: Args<"acquireLeadership", PoolOps>): ReturnType<PoolOps["acquireLeadership"]> {
    return this.pools.acquireLeadership(...a);
  }

  changePoolLimit(...a: Args<"changePoolLimit", PoolOps>): ReturnType<PoolOps["changePoolLimit"]> {
    return this.pools.changePoolLimit(...a);
  }

  countRateLimited(...a: Args<"countRateLimited", PoolOps>): ReturnType<PoolOps["countRateLimited"]> {
    return this.pools.countRateLimited(...a);
  }

  counts(...a: Args<"counts", PoolOps>): ReturnType<PoolOps["counts"]> {
    return this.pools.counts(...a);
  }

  ensurePool(...a: Args<"ensurePool", PoolOps>): ReturnType<PoolOps["ensurePool"]> {
    return this.pools.ensurePool(...a);
  }

  readPoolConfig(...a: Args<"readPoolConfig", PoolOps>): ReturnType<PoolOps["readPoolConfig"]> {
    return this.pools.readPoolConfig(...a);
  }

  readRateLimits(...a: Args<"readRateLimits", PoolOps>): ReturnType<PoolOps["readRateLimits"]> {
    return this.pools.readRateLimits(...a);
  }

  readStats(...a: Args<"readStats", PoolOps>): ReturnType<PoolOps["readStats"]> {
    return this.pools.readStats(...a);
  }

  releaseLeadership(...a: Args<"releaseLeadership", PoolOps>): ReturnType<PoolOps["releaseLeadership"]> {
    return this.pools.releaseLeadership(...a);
  }

  setRateLimits(...a: Args<"setRateLimits", PoolOps>): ReturnType<PoolOps["setRateLimits"]> {
    return this.pools.setRateLimits(...a);
  }

  // ScheduleOps.

  advanceSchedule(...a: Args<"advanceSchedule", ScheduleOps>): ReturnType<ScheduleOps["advanceSchedule"]> {
    return this.schedules.advanceSchedule(...a);
  }

  deleteSchedule(...a: Args<"deleteSchedule", ScheduleOps>): ReturnType<ScheduleOps["deleteSchedule"]> {
    return this.schedules.deleteSchedule(...a);
  }

  dueSchedules(...a: Args<"dueSchedules", ScheduleOps>): ReturnType<ScheduleOps["dueSchedules"]> {
    return this.schedules.dueSchedules(...a);
  }

  listSchedules(...a: Args<"listSchedules", ScheduleOps>): ReturnType<ScheduleOps["listSchedules"]> {
    return this.schedules.listSchedules(...a);
  }

  upsertSchedule(...a: Args<"upsertSchedule", ScheduleOps>): ReturnType<ScheduleOps["upsertSchedule"]> {
    return this.schedules.upsertSchedule(...a);
  }

  // AdminOps.

  listWork(...a: Args<"listWork", AdminOps>): ReturnType<AdminOps["listWork"]> {
    return this.admin.listWork(...a);
  }

  readActivity(...a: Args<"readActivity", AdminOps>): ReturnType<AdminOps["readActivity"]> {
    return this.admin.readActivity(...a);
  }

  readPools(...a: Args<"readPools", AdminOps>): ReturnType<AdminOps["readPools"]> {
    return this.admin.readPools(...a);
  }

  readWorkDetail(...a: Args<"readWorkDetail", AdminOps>): ReturnType<AdminOps["readWorkDetail"]> {
    return this.admin.readWorkDetail(...a);
  }

  retryWork(...a: Args<"retryWork", AdminOps>): ReturnType<AdminOps["retryWork"]> {
    return this.admin.retryWork(...a);
  }

  schemaVersion(): ReturnType<AdminOps["schemaVersion"]> {
    return this.admin.schemaVersion();
  }

  // RedriveOps.

  listRedrivable(...a: Args<"listRedrivable", RedriveOps>): ReturnType<RedriveOps["listRedrivable"]> {
    return this.redrives.listRedrivable(...a);
  }

  lastRedrivable(...a: Args<"lastRedrivable", RedriveOps>): ReturnType<RedriveOps["lastRedrivable"]> {
    return this.redrives.lastRedrivable(...a);
  }

  redrive(...a: Args<"redrive", RedriveOps>): ReturnType<RedriveOps["redrive"]> {
    return this.redrives.redrive(...a);
  }
}
