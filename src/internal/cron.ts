/**
 * Cron schedules: checking a schedule's input and working out its ticks. Parsing and time
 * zones are croner's; this file only decides which tick a due schedule enqueues.
 */
import { withTick } from "./work-meta.js";
import { Cron } from "croner";
import type { WorkFields } from "../driver/driver.js";
import { newWork } from "../driver/work-columns.js";
import type { CatchUp, ScheduleAdvance, ScheduleRow } from "../driver/schedule-ops.js";
import { InvalidArgumentError } from "../errors.js";
import { newWorkId } from "../ids.js";
import { checkName, checkOptionKeys, describeValue } from "../checks.js";

/** When a schedule runs: a 5-field (minutes) or 6-field (seconds) cron expression, in an IANA time zone. */
export interface CronSpec {
  /** E.g. `"0 2 * * *"` (02:00 every day) or `"*\/10 * * * * *"` (every 10 seconds). */
  cron: string;
  /** IANA time zone the expression is read in, e.g. `"Europe/Berlin"`. Default `"UTC"`. */
  timezone?: string;
}

/**
 * With catchUp "none", a tick enqueued more than this late counts as missed and is skipped:
 * it was due while no worker of the pool ran.
 */
export const MISSED_AFTER_MS = 10_000;
/** Longest schedule id, in characters. */
export const MAX_SCHEDULE_ID_LENGTH = 200;
/** Most ticks walked one by one to find the latest due one; past that croner's previousRuns() is asked. */
const WALK_LIMIT = 10_000;

/** The enqueue options each tick's work gets, as stored with the schedule. */
export type StoredWorkOptions = Pick<WorkFields, "name" | "retry" | "timeoutMs" | "onComplete" | "context" | "priority" | "key"> & {
  /** The work's meta (see work-meta.ts); absent in schedules stored without one. */
  meta?: string | null;
};

/** Checks a schedule id. */
export function checkScheduleId(value: unknown): string {
  return checkName("scheduleId", value, MAX_SCHEDULE_ID_LENGTH);
}

/** Checks `catchUp`. */
export function checkCatchUp(value: unknown): CatchUp {
  if (value === undefined) return "latest";
  if (value !== "latest" && value !== "none") {
    throw new InvalidArgumentError("catchUp", `must be "latest" or "none", got ${describeValue(value)}`);
  }
  return value;
}

function cronOf(cron: string, timezone: string): Cron {
  return new Cron(cron, { timezone, paused: true, mode: "5-or-6-parts" });
}

/** Checks a spec (expression and time zone) and returns it with its zone resolved. */
export function checkSpec(value: unknown): { cron: string; timezone: string } {
  const o = checkOptionKeys("spec", value, ["cron", "timezone"], "schedule() (a spec)", "spec.");
  if (typeof o.cron !== "string" || o.cron.trim() === "" || o.cron.length > 200) {
    throw new InvalidArgumentError("spec.cron", `must be a cron expression of 5 or 6 fields, got ${describeValue(o.cron)}`);
  }
  const timezone = o.timezone === undefined ? "UTC" : o.timezone;
  if (typeof timezone !== "string" || !isTimeZone(timezone)) {
    throw new InvalidArgumentError(
      "spec.timezone",
      `must be an IANA time zone such as "Europe/Berlin" or "UTC", got ${describeValue(timezone)}`,
    );
  }
  let cron: Cron;
  try {
    cron = cronOf(o.cron, timezone);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new InvalidArgumentError("spec.cron", `must be a cron expression of 5 fields or 6 (with seconds): ${why}`);
  }
  if (cron.nextRun() === null) throw new InvalidArgumentError("spec.cron", `never runs: ${describeValue(o.cron)}`);
  return { cron: o.cron, timezone };
}

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The first tick strictly after `after`, or null if the expression has no later one. */
export function nextTick(cron: string, timezone: string, after: number): number | null {
  return cronOf(cron, timezone).nextRun(new Date(after))?.getTime() ?? null;
}

/** The latest tick at or before `now`, starting from the due tick `from`, and the first after `now`. */
function latestDue(cron: string, timezone: string, from: number, now: number): { latest: number; next: number | null } {
  const c = cronOf(cron, timezone);
  let latest = from;
  for (let i = 0; i < WALK_LIMIT; i++) {
    const t = c.nextRun(new Date(latest))?.getTime() ?? null;
    if (t === null || t > now) return { latest, next: t };
    latest = t;
  }
  // Down for longer than WALK_LIMIT ticks: ask for the latest one directly.
  const next = c.nextRun(new Date(now))?.getTime() ?? null;
  const before = c.previousRuns(2, new Date(now + 1)).map((d) => d.getTime());
  return { latest: before.find((t) => t <= now) ?? latest, next };
}

/**
 * The step a due schedule takes at `now`: the tick it enqueues (the latest one due; with
 * catchUp "none" only if it is not missed) and its next tick, applied by the store only if
 * the schedule is still as read.
 */
export function planStep(pool: string, s: ScheduleRow, now: number): ScheduleAdvance {
  const { latest, next } = latestDue(s.cron, s.timezone, s.nextRunAt, now);
  const run = s.catchUp === "latest" || now - latest <= MISSED_AFTER_MS;
  const o = JSON.parse(s.options) as StoredWorkOptions;
  const work = newWork({
    id: newWorkId(now),
    pool,
    kind: s.kind,
    fnName: s.fnName,
    name: o.name,
    args: s.args,
    runAt: latest,
    enqueuedAt: now,
    retry: o.retry,
    timeoutMs: o.timeoutMs,
    onComplete: o.onComplete,
    context: o.context,
    priority: o.priority,
    key: o.key,
    // The handler reads the tick as ctx.scheduledAt, even once a retry moved runAt.
    meta: withTick(o.meta ?? null, s.id, latest),
  });
  return {
    id: s.id,
    revision: s.revision,
    expectNextRunAt: s.nextRunAt,
    // No later tick (an expression whose last date passed): never due again.
    nextRunAt: next ?? Number.MAX_SAFE_INTEGER,
    tick: run ? { at: latest, work } : null,
  };
}
