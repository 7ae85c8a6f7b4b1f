/**
 * Bounds on scheduled times, as in the reference system: a time more than a year in the
 * past runs now, one more than four years ahead is moved to one year ahead. Both are
 * logged, since they are almost always a unit mistake (seconds for ms, or the reverse).
 */
import { InvalidArgumentError } from "../errors.js";
import type { PoolLogger } from "../events.js";
import { YEAR } from "../options.js";
import { describeValue } from "../checks.js";

/**
 * The time a retry or redelivery is scheduled at, as written to the store: `ms` (epoch)
 * rounded up to a whole millisecond (stores keep integers) and clamped into
 * [now - 1y, now + 4y], logging when the clamp changes it. Every computed time passes
 * here before it is written.
 */
export function boundScheduledTime(raw: number, now: number, logger: PoolLogger): number {
  if (Number.isNaN(raw)) throw new Error("workpool: a scheduled time came out as NaN");
  const ms = Math.ceil(raw);
  if (ms < now - YEAR) {
    logger.error(`workpool: scheduled time ${ms} is more than a year in the past; running it now`);
    return now;
  }
  if (ms > now + 4 * YEAR) {
    logger.error(`workpool: scheduled time ${ms} is more than four years ahead; scheduling it one year from now`);
    return now + YEAR;
  }
  return ms;
}

/** Resolves enqueue's runAt / runAfter into an epoch time, rejecting bad input. */
export function resolveRunAt(opts: { runAt?: unknown; runAfter?: unknown }, now: number, logger: PoolLogger): number {
  const { runAt, runAfter } = opts;
  if (runAt !== undefined && runAfter !== undefined) {
    throw new InvalidArgumentError("runAt", "give runAt (epoch ms) or runAfter (ms from now), not both");
  }
  if (runAt !== undefined) {
    if (typeof runAt !== "number" || !Number.isFinite(runAt)) {
      throw new InvalidArgumentError("runAt", `must be a finite number of epoch milliseconds, got ${describeValue(runAt)}`);
    }
    return boundScheduledTime(Math.floor(runAt), now, logger);
  }
  if (runAfter !== undefined) {
    if (typeof runAfter !== "number" || !Number.isFinite(runAfter)) {
      throw new InvalidArgumentError("runAfter", `must be a finite number of milliseconds, got ${describeValue(runAfter)}`);
    }
    return boundScheduledTime(Math.floor(now + runAfter), now, logger);
  }
  return now;
}
