/**
 * How the `workpool` command shows things to people: aligned tables (like `kubectl get`),
 * durations and relative times, key-value blocks; and how it reads times from them. Every
 * cell and value is escaped (terminal-text.ts) unless it is already shown text.
 */
import { CliError, EXIT } from "./exit-codes.js";
import { joinShown, shown, t, trimEnd, type Printable, type Shown } from "./terminal-text.js";

/** Visible length of shown text, without its colour codes (the only escape sequences it can hold). */
function width(text: Shown): number {
  // eslint-disable-next-line no-control-regex
  return text.text.replace(/\u001b\[[0-9;]*m/g, "").length;
}

/** Rows under upper-case headers, columns padded to their widest cell and three spaces apart. */
export function table(headers: readonly string[], rows: readonly (readonly Printable[])[]): Shown {
  const head = headers.map((h) => shown(h.toUpperCase()));
  const body = rows.map((r) => headers.map((_, i) => shown(r[i] ?? "")));
  const widths = head.map((h, i) => Math.max(width(h), ...body.map((r) => width(r[i]!))));
  const line = (cells: readonly Shown[]): Shown => {
    const padded = cells.map((c, i) => (i === cells.length - 1 ? c : t`${c}${" ".repeat(widths[i]! - width(c))}`));
    return trimEnd(joinShown(padded, "   "));
  };
  return joinShown([line(head), ...body.map(line)], "\n");
}

/** Label-value lines with the values aligned. */
export function block(pairs: readonly (readonly [string, Printable])[]): Shown {
  const w = Math.max(...pairs.map(([k]) => k.length));
  return joinShown(
    pairs.map(([k, v]) => t`${k.padEnd(w)}   ${v}`),
    "\n",
  );
}

/** A short duration: "850 ms", "12 s", "3 min", "5 h", "2 d". */
export function duration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(ms)} ms`;
  if (abs < 60_000) return `${Math.round(ms / 1000)} s`;
  if (abs < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (abs < 86_400_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 86_400_000)} d`;
}

/** A time relative to `now`: "3 min ago", "in 20 s", "-" for none. */
export function ago(time: number | null, now: number): string {
  if (time === null) return "-";
  if (Math.abs(now - time) < 1000) return "now";
  return time <= now ? `${duration(now - time)} ago` : `in ${duration(time - now)}`;
}

/** An epoch time as "2030-01-01 12:00:05 UTC (3 min ago)", "-" for none. */
export function when(time: number | null, now: number): string {
  if (time === null) return "-";
  return `${new Date(time)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, " UTC")} (${ago(time, now)})`;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * A `--before` value as an epoch time: an age ("7d", "12h", "30m", "90s"), an ISO date
 * ("2030-01-01" or with a time), or epoch ms. Anything else is a usage error naming `flag`.
 */
export function parseBefore(flag: string, value: string, now: number): number {
  const age = /^(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d|w)$/.exec(value.trim());
  if (age) return now - Number(age[1]) * UNITS[age[2]!]!;
  if (/^\d{10,}$/.test(value)) return Number(value);
  const day = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  const date = day ? Date.parse(value) : Number.NaN;
  if (Number.isFinite(date)) {
    // Date.parse rolls an impossible day over (2030-02-31 is March 3): the day must read back as given.
    if (isCalendarDay(Number(day![1]), Number(day![2]), Number(day![3]))) return date;
    throw new CliError(`${flag}: ${day![0]} is not a day of the calendar, got "${value}"`, EXIT.usage);
  }
  throw new CliError(
    `${flag}: expected an age (7d, 12h, 30m, 90s), a date (2030-01-31, 2030-01-31T12:00:00Z) or epoch ms, got "${value}"`,
    EXIT.usage,
  );
}

/** Whether year-month-day names a real day (no February 31). */
function isCalendarDay(year: number, month: number, day: number): boolean {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

/** A whole number option in [min, max], or a usage error naming `flag`. */
export function parseCount(flag: string, value: string, min: number, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new CliError(`${flag}: expected a whole number from ${min} to ${max}, got "${value}"`, EXIT.usage);
  return n;
}
