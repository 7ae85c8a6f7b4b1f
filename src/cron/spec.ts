/**
 * A schedule's cron expression: its checks, and its ticks as croner computes them in the
 * schedule's time zone. The only file that uses croner.
 */
import { Cron } from "croner";
import { checkOptionKeys, describeValue, optionKeys } from "../checks.js";
import { InvalidArgumentError } from "../errors.js";

/** When a schedule runs: a 5-field (minutes) or 6-field (seconds) cron expression, in an IANA time zone. */
export interface CronSpec {
  /** E.g. `"0 2 * * *"` (02:00 every day) or `"*\/10 * * * * *"` (every 10 seconds). */
  cron: string;
  /** IANA time zone the expression is read in, e.g. `"Europe/Berlin"`. Default `"UTC"`. */
  timezone?: string;
}

const SPEC_KEYS = optionKeys<CronSpec>()({ cron: true, timezone: true });

/** Most ticks walked one by one to find the latest due one; past that croner's previousRuns() is asked. */
const WALK_LIMIT = 10_000;

function cronOf(cron: string, timezone: string): Cron {
  return new Cron(cron, { timezone, paused: true, mode: "5-or-6-parts" });
}

/** Checks a spec (expression and time zone) and returns it with its zone resolved. */
export function checkSpec(value: unknown): { cron: string; timezone: string } {
  const o = checkOptionKeys("spec", value, SPEC_KEYS, "schedule() (a spec)", "spec.");
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
export function latestDue(cron: string, timezone: string, from: number, now: number): { latest: number; next: number | null } {
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
