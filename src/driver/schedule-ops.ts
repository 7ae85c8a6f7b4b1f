/**
 * The part of the driver interface behind cron schedules: stored schedules and the
 * compare-and-set that enqueues a tick exactly once. Internal like the rest of the
 * interface; every time is a parameter.
 */
import type { WorkKind } from "../types.js";
import type { NewWork } from "./work-rows.js";

/** What a missed tick does after every worker was down: run the latest once, or skip. */
export type CatchUp = "latest" | "none";

/** A schedule as stored. */
export interface ScheduleRow {
  pool: string;
  id: string;
  cron: string;
  timezone: string;
  catchUp: CatchUp;
  kind: WorkKind;
  fnName: string;
  /** JSON text of the args each tick's work gets. */
  args: string;
  /** JSON text of the stored enqueue options (see internal/schedules.ts). */
  options: string;
  /** When the next tick is due, epoch ms. */
  nextRunAt: number;
  /** The last tick enqueued, or null. */
  lastTick: number | null;
  /** The work of the last tick enqueued, or null. */
  lastWorkId: string | null;
  /** Changes with every write of the definition: a tick computed from an older one is refused. */
  revision: number;
  createdAt: number;
  updatedAt: number;
}

/** A schedule() write: creates the schedule or replaces its definition. */
export interface ScheduleWrite {
  id: string;
  cron: string;
  timezone: string;
  catchUp: CatchUp;
  kind: WorkKind;
  fnName: string;
  args: string;
  options: string;
  /** The first tick after now under this definition: kept instead when cron and timezone are unchanged. */
  nextRunAt: number;
  now: number;
}

/** One step of a schedule, applied only if it still has `revision` and `nextRunAt` (compare-and-set). */
export interface ScheduleAdvance {
  id: string;
  revision: number;
  /** The next_run_at the caller read. */
  expectNextRunAt: number;
  /** The next_run_at to write. */
  nextRunAt: number;
  /** The tick to enqueue and its work, or null to skip the ticks passed over. */
  tick: { at: number; work: NewWork } | null;
}

/** The schedule operations every driver implements. */
export interface ScheduleOps {
  /** Moves the schedule to its next tick and inserts the tick's work, in one transaction, only if it still has the revision and next_run_at read; true if it did. */
  advanceSchedule(pool: string, step: ScheduleAdvance): Promise<boolean>;
  /** Deletes a schedule; true if it existed. */
  deleteSchedule(pool: string, id: string): Promise<boolean>;
  /** Up to `limit` schedules due at `now` (earliest first), and the earliest next_run_at of the rest (or null). */
  dueSchedules(pool: string, now: number, limit: number): Promise<{ due: ScheduleRow[]; nextAt: number | null }>;
  /** The schedules of `pool` (null: of every pool), by pool and id. */
  listSchedules(pool: string | null): Promise<ScheduleRow[]>;
  /** Creates or replaces a schedule (one transaction). Keeps next_run_at when cron and timezone are unchanged. */
  upsertSchedule(pool: string, write: ScheduleWrite): Promise<void>;
}
