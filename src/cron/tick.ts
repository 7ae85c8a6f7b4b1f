/**
 * The step a due schedule takes: which tick it enqueues (if any), that tick's work, and
 * the schedule's next tick. Pure: the loop (loop.ts) reads the due schedules and the
 * enqueue transition writes each step.
 */
import type { NewWork } from "../driver/driver.js";
import type { ScheduleAdvance, ScheduleRow } from "../driver/schedule-ops.js";
import { newWork } from "../driver/work-columns.js";
import { newWorkId } from "../ids.js";
import { withTick } from "../internal/work-meta.js";
import { latestDue } from "./spec.js";
import { readWorkOptions } from "./stored.js";

/**
 * With catchUp "none", a tick enqueued more than this late counts as missed and is skipped:
 * it was due while no worker of the pool ran.
 */
export const MISSED_AFTER_MS = 10_000;

/**
 * The step a due schedule takes at `now`: the tick it enqueues (the latest one due; with
 * catchUp "none" only if it is not missed) and its next tick, applied by the store only if
 * the schedule is still as read.
 */
export function planStep(pool: string, s: ScheduleRow, now: number): ScheduleAdvance {
  const { latest, next } = latestDue(s.cron, s.timezone, s.nextRunAt, now);
  const run = s.catchUp === "latest" || now - latest <= MISSED_AFTER_MS;
  return {
    id: s.id,
    revision: s.revision,
    expectNextRunAt: s.nextRunAt,
    // No later tick (an expression whose last date passed): never due again.
    nextRunAt: next ?? Number.MAX_SAFE_INTEGER,
    tick: run ? { at: latest, work: tickWork(pool, s, latest, now) } : null,
  };
}

/** The work of the tick `at` of schedule `s`, enqueued at `now`, due at the tick. */
function tickWork(pool: string, s: ScheduleRow, at: number, now: number): NewWork {
  const o = readWorkOptions(s.options);
  return newWork({
    id: newWorkId(now),
    enqueuedAt: now,
    pool,
    kind: s.kind,
    fnName: s.fnName,
    name: o.name,
    args: s.args,
    runAt: at,
    retry: o.retry,
    timeoutMs: o.timeoutMs,
    onComplete: o.onComplete,
    context: o.context,
    priority: o.priority,
    key: o.key,
    // The handler reads the tick as ctx.scheduledAt, even once a retry moved runAt.
    meta: withTick(o.meta ?? null, s.id, at),
    uniqueKey: null,
    onConflict: "keep",
  });
}
