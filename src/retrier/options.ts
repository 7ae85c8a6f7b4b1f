/**
 * Options of {@link ActionRetrier}, their validation, and the mapping of the retrier's
 * backoff onto the pool's retry behaviour.
 *
 * The two formulas count differently:
 * - retrier: after the run's k-th failure (k = 1, 2, …; `numFailures` = k - 1 before it
 *   is counted) the next attempt waits `initialBackoffMs * base^(numFailures + 1)`,
 *   i.e. `initialBackoffMs * base^k`, and at most `maxFailures` retries happen;
 * - pool: after attempt n fails, attempt n + 1 waits `initialBackoffMs' * base'^(n - 1)`,
 *   and at most `maxAttempts` attempts happen.
 * Attempt n failing is the run's n-th failure (k = n), so with `base' = base` and
 * `initialBackoffMs' = initialBackoffMs * base` the pool waits
 * `initialBackoffMs * base * base^(n - 1) = initialBackoffMs * base^n`: the same delay.
 * `maxAttempts = maxFailures + 1` (the first attempt plus one per allowed failure).
 * Both apply the same jitter, a factor in [0.5, 1.5).
 */
import type { Clock } from "../clock.js";
import { InvalidArgumentError } from "../errors.js";
import type { Logger, LogLevel } from "../events.js";
import { checkLogLevel } from "../options.js";
import { checkInt, checkName, checkOptionKeys, describeValue, optionKeys } from "../checks.js";
import type { Telemetry } from "../telemetry.js";
import type { RetryBehavior } from "../types.js";
import type { RunOptions } from "./types.js";

/** Options of `new ActionRetrier(store, options)`. */
export interface ActionRetrierOptions {
  /** Base of the first retry's delay, ms: the first retry waits `initialBackoffMs * base`. Finite number 0..86400000. Default 250. */
  initialBackoffMs?: number;
  /** Growth factor of the delay per failure. Finite number 1..1000. Default 2. */
  base?: number;
  /** How many failures are retried; a run makes at most `maxFailures + 1` attempts. Integer 0..999. Default 4. */
  maxFailures?: number;
  /** Least severe level written to the logger. Default "REPORT" (the pool's default). */
  logLevel?: LogLevel;
  /** Name of the underlying pool; retriers with different names share a store independently. Default "action-retrier". */
  name?: string;
  /** Where log lines go. Default `console`. */
  logger?: Logger;
  /** Time source; inject a `ManualClock` in tests. Default: the system clock. */
  clock?: Clock;
  /** Source of jitter in [0, 1). Default Math.random. */
  random?: () => number;
  /** How long a running attempt survives without its worker's heartbeat before it counts as a failure and is retried, ms. Integer 100..86400000. Default 30000. */
  leaseMs?: number;
  /** Tracing of runs and their attempts, e.g. `openTelemetry()` from `workpool/opentelemetry`. Default: none. */
  telemetry?: Telemetry;
}

/** The retrier's own options after defaults and validation (the rest go to the pool as given). */
export interface ResolvedRetrierOptions {
  name: string;
  initialBackoffMs: number;
  base: number;
  maxFailures: number;
}

/** The backoff options of the retrier, which a run may override. */
export interface Backoff {
  initialBackoffMs: number;
  base: number;
  maxFailures: number;
}

/** Checks backoff options (the retrier's own or a run's), naming the field and its range. */
export function checkBackoff(o: Record<string, unknown>): Backoff {
  return {
    initialBackoffMs: checkRange("initialBackoffMs", o.initialBackoffMs, 0, MAX_INITIAL_BACKOFF_MS),
    base: checkRange("base", o.base, 1, MAX_BASE),
    maxFailures: checkInt("maxFailures", o.maxFailures, 0, 999),
  };
}

/** Default name of the retrier's pool. */
export const DEFAULT_RETRIER_NAME = "action-retrier";
/** Completed runs are kept this long (then deleted), as in the reference: 7 days. */
export const RETRIER_RETENTION_MS = 7 * 24 * 3600 * 1000;

const KNOWN = optionKeys<ActionRetrierOptions>()({
  initialBackoffMs: true,
  base: true,
  maxFailures: true,
  logLevel: true,
  name: true,
  logger: true,
  clock: true,
  random: true,
  leaseMs: true,
  telemetry: true,
});

/** The options of run(); runAt() and runAfter() take all but runAt and runAfter. */
export const RUN_OPTION_KEYS = optionKeys<RunOptions<unknown>>()({
  onComplete: true,
  context: true,
  initialBackoffMs: true,
  base: true,
  maxFailures: true,
  logLevel: true,
  runAt: true,
  runAfter: true,
  tx: true,
});
const MAX_INITIAL_BACKOFF_MS = 24 * 3600 * 1000;
const MAX_BASE = 1000;

function checkRange(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    throw new InvalidArgumentError(field, `must be a finite number from ${min} to ${max}, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Validates the retrier's options. Unknown keys are rejected (a typo such as `maxRetries`
 * would otherwise silently keep the default). Pool options (logger, clock, random,
 * leaseMs, telemetry) are validated by the pool itself.
 */
export function resolveRetrierOptions(options: unknown): ResolvedRetrierOptions {
  const o =
    options === undefined
      ? {}
      : checkOptionKeys("options", options, KNOWN, "ActionRetrier", "", `is not an option of ActionRetrier (allowed: ${KNOWN.join(", ")})`);
  if (o.logLevel !== undefined) checkLogLevel("logLevel", o.logLevel);
  return {
    name: o.name === undefined ? DEFAULT_RETRIER_NAME : checkName("name", o.name),
    ...checkBackoff({ initialBackoffMs: o.initialBackoffMs ?? 250, base: o.base ?? 2, maxFailures: o.maxFailures ?? 4 }),
  };
}

/** The pool retry behaviour that reproduces the retrier's schedule (derivation above). */
export function retrierRetryBehavior(o: { initialBackoffMs: number; base: number; maxFailures: number }): RetryBehavior {
  return { maxAttempts: o.maxFailures + 1, initialBackoffMs: o.initialBackoffMs * o.base, base: o.base };
}
