/**
 * Validation and defaults of every option. Each check throws an InvalidArgumentError that
 * names the option and the allowed values, before anything is written.
 */
import { systemClock, type Clock } from "./clock.js";
import { checkInt, checkName, checkNumber, checkOptionKeys, describeValue, optionKeys } from "./checks.js";
import { InvalidArgumentError } from "./errors.js";
import { LOG_LEVELS, type Logger, type LogLevel } from "./events.js";
import { DEFAULT_RETRY_BEHAVIOR } from "./retry.js";
import { checkTelemetry, type Telemetry } from "./telemetry.js";
import type { RateLimit, RetryBehavior } from "./types.js";

/** Largest maxParallelism accepted. */
export const MAX_PARALLELISM = 10_000;
/** Default maxParallelism. */
export const DEFAULT_MAX_PARALLELISM = 10;
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** A year in ms, as used to clamp scheduled times. */
export const YEAR = 365 * DAY;

/** Options of `new Workpool(store, options)`. */
export interface WorkpoolOptions<P extends string = string> {
  /** Pool name; many pools may share one store. 1-100 characters of [A-Za-z0-9_.:-]. Default "default". */
  name?: P;
  /** Most attempts of this pool running at once, across all processes. Integer 0..10000 (0 pauses). Default 10. */
  maxParallelism?: number;
  /**
   * Most attempts with one `key` running at once in this pool, across all processes.
   * Integer 1..10000; 1 makes a serial queue per key. Default: no per-key limit.
   */
  keyParallelism?: number;
  /** Whether actions retry when enqueue does not say. Default false. */
  retryActionsByDefault?: boolean;
  /** Retry behaviour for `retry: true` (and for onComplete redelivery). Default { maxAttempts: 5, initialBackoffMs: 250, base: 2 }. */
  defaultRetryBehavior?: RetryBehavior;
  /** Least severe level written to the logger. Default "REPORT". */
  logLevel?: LogLevel;
  /** How long a running attempt survives without its worker's heartbeat, ms. Integer 100..86400000. Default 30000. */
  leaseMs?: number;
  /** Timeout of every action attempt, ms, unless enqueue sets `timeoutMs`. Default: none. */
  actionTimeoutMs?: number;
  /** How long finished work keeps its result for `status`, ms. Integer >= 0. Default 24 h. */
  retentionMs?: number;
  /** Where log lines go. Default `console`. */
  logger?: Logger;
  /** Time source; inject a `ManualClock` in tests. Default: the system clock. */
  clock?: Clock;
  /** Source of jitter in [0, 1). Default Math.random. */
  random?: () => number;
  /** Interval of the periodic `report` event, ms. Default 60000. */
  reportIntervalMs?: number;
  /** How often the maintenance leader rescues expired leases and cleans up, ms. Default 1000. */
  maintenanceIntervalMs?: number;
  /** Safety poll for work from other processes, ms. Default: the store's (SQLite 100, PostgreSQL 5000). */
  pollIntervalMs?: number;
  /**
   * Most attempts of this pool that *this process* runs at once: a local cap under the
   * global maxParallelism, to spread work over processes. Integer 1..10000. Default: none.
   */
  concurrency?: number;
  /**
   * At most `limit` attempts of this pool start in any window of `periodMs`, across every
   * process. limit integer 1..1000000, periodMs integer 1..2592000000. Default: none.
   */
  rateLimit?: RateLimit;
  /** The same per `key` of work: at most `limit` attempts with one key start in any `periodMs`. Default: none. */
  keyRateLimit?: RateLimit;
  /** Tracing of enqueues, attempts and onComplete deliveries, e.g. `openTelemetry()` from `workpool/opentelemetry`. Default: none. */
  telemetry?: Telemetry;
}

/** Options after defaults and validation. */
export interface ResolvedOptions {
  name: string;
  maxParallelism: number;
  /** The per-key limit this instance seeds a new pool with (null: none). */
  keyParallelism: number | null;
  /** Fields the caller set explicitly; written to the store when the pool starts. */
  explicit: { maxParallelism?: number; logLevel?: LogLevel; keyParallelism?: number };
  /** Rate limits the caller set explicitly; written to the store when the pool starts. */
  explicitRates: { rateLimit?: RateLimit; keyRateLimit?: RateLimit };
  retryActionsByDefault: boolean;
  defaultRetryBehavior: RetryBehavior;
  logLevel: LogLevel;
  leaseMs: number;
  actionTimeoutMs: number | null;
  retentionMs: number;
  logger: Logger;
  clock: Clock;
  random: () => number;
  reportIntervalMs: number;
  maintenanceIntervalMs: number;
  pollIntervalMs: number | null;
  concurrency: number | null;
  telemetry: Telemetry | null;
}

/** Validates a max parallelism value. */
export function checkMaxParallelism(field: string, value: unknown): number {
  return checkInt(field, value, 0, MAX_PARALLELISM);
}

/** Validates a per-key parallelism value (null, where allowed, removes the limit). */
export function checkKeyParallelism(field: string, value: unknown, allowNull: boolean): number | null {
  if (value === null && allowNull) return null;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_PARALLELISM) {
    const range = `an integer from 1 to ${MAX_PARALLELISM}${allowNull ? ", or null for no per-key limit" : ""}`;
    throw new InvalidArgumentError(field, `must be ${range}, got ${describeValue(value)}`);
  }
  return value;
}

/** Largest rate limit accepted. */
export const MAX_RATE_LIMIT = 1_000_000;
/** Longest rate-limit window accepted, ms (30 days). */
export const MAX_RATE_PERIOD_MS = 30 * DAY;

const RATE_LIMIT_KEYS = optionKeys<RateLimit>()({ limit: true, periodMs: true });

/** Validates a rate limit `{ limit, periodMs }` (null, where allowed, removes it). */
export function checkRateLimit(field: string, value: unknown, allowNull: boolean): RateLimit | null {
  if (value === null && allowNull) return null;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const extra = allowNull ? ", or null to remove the limit" : "";
    throw new InvalidArgumentError(field, `must be an object { limit, periodMs }${extra}, got ${describeValue(value)}`);
  }
  const v = checkOptionKeys(field, value, RATE_LIMIT_KEYS, `${field} (a rate limit)`, `${field}.`);
  return {
    limit: checkInt(`${field}.limit`, v.limit, 1, MAX_RATE_LIMIT),
    periodMs: checkInt(`${field}.periodMs`, v.periodMs, 1, MAX_RATE_PERIOD_MS),
  };
}

/** Validates a log level. */
export function checkLogLevel(field: string, value: unknown): LogLevel {
  if (typeof value !== "string" || !(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(field, `must be one of ${LOG_LEVELS.join(", ")}, got ${describeValue(value)}`);
  }
  return value as LogLevel;
}

const RETRY_KEYS = optionKeys<RetryBehavior>()({ maxAttempts: true, initialBackoffMs: true, base: true });

/** Validates a retry behaviour: maxAttempts integer 1..1000, initialBackoffMs >= 0, base >= 1. */
export function checkRetryBehavior(field: string, value: unknown): RetryBehavior {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(field, "must be an object { maxAttempts, initialBackoffMs, base }");
  }
  const v = checkOptionKeys(field, value, RETRY_KEYS, `${field} (a retry behaviour)`, `${field}.`);
  return {
    maxAttempts: checkInt(`${field}.maxAttempts`, v.maxAttempts, 1, 1000),
    initialBackoffMs: checkNumber(`${field}.initialBackoffMs`, v.initialBackoffMs, 0),
    base: checkNumber(`${field}.base`, v.base, 1),
  };
}

function checkLogger(value: unknown): Logger {
  const v = value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null || !["debug", "info", "warn", "error"].every((m) => typeof v[m] === "function")) {
    throw new InvalidArgumentError("logger", "must have debug, info, warn and error methods (console fits)");
  }
  return value as Logger;
}

/** Validates an injected clock (now, setTimeout, clearTimeout) and checks its readings (see checkedClock). */
export function checkClock(value: unknown): Clock {
  const v = value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null || !["now", "setTimeout", "clearTimeout"].every((m) => typeof v[m] === "function")) {
    throw new InvalidArgumentError("clock", "must have now, setTimeout and clearTimeout methods");
  }
  return checkedClock(value as Clock);
}

/**
 * An injected clock whose readings are checked: every time a pool writes comes from
 * `now()` or from a scheduled time (see boundScheduledTime), and stores keep whole
 * epoch milliseconds. A reading that is not a finite, non-negative number is an error
 * naming the clock; a fractional one is rounded down.
 */
export function checkedClock(clock: Clock): Clock {
  return {
    now() {
      const t = clock.now();
      if (typeof t !== "number" || !Number.isFinite(t) || t < 0 || t > Number.MAX_SAFE_INTEGER) {
        throw new InvalidArgumentError(
          "clock",
          `now() returned ${describeValue(t)}; it must return epoch milliseconds (a finite number from 0 to 2^53 - 1)`,
        );
      }
      return Math.floor(t);
    },
    setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
    clearTimeout: (handle) => clock.clearTimeout(handle),
  };
}

const WORKPOOL_OPTION_KEYS = optionKeys<WorkpoolOptions>()({
  name: true,
  maxParallelism: true,
  keyParallelism: true,
  retryActionsByDefault: true,
  defaultRetryBehavior: true,
  logLevel: true,
  leaseMs: true,
  actionTimeoutMs: true,
  retentionMs: true,
  logger: true,
  clock: true,
  random: true,
  reportIntervalMs: true,
  maintenanceIntervalMs: true,
  pollIntervalMs: true,
  concurrency: true,
  rateLimit: true,
  keyRateLimit: true,
  telemetry: true,
});

/** Applies defaults to and validates the pool options. */
export function resolveOptions(options: WorkpoolOptions | undefined): ResolvedOptions {
  const o = (options === undefined ? {} : checkOptionKeys("options", options, WORKPOOL_OPTION_KEYS, "new Workpool()")) as WorkpoolOptions;
  const explicit: ResolvedOptions["explicit"] = {};
  if (o.maxParallelism !== undefined) explicit.maxParallelism = checkMaxParallelism("maxParallelism", o.maxParallelism);
  if (o.logLevel !== undefined) explicit.logLevel = checkLogLevel("logLevel", o.logLevel);
  if (o.keyParallelism !== undefined) explicit.keyParallelism = checkKeyParallelism("keyParallelism", o.keyParallelism, false)!;
  if (o.retryActionsByDefault !== undefined && typeof o.retryActionsByDefault !== "boolean") {
    throw new InvalidArgumentError("retryActionsByDefault", `must be a boolean, got ${describeValue(o.retryActionsByDefault)}`);
  }
  const explicitRates: ResolvedOptions["explicitRates"] = {};
  if (o.rateLimit !== undefined) explicitRates.rateLimit = checkRateLimit("rateLimit", o.rateLimit, false)!;
  if (o.keyRateLimit !== undefined) explicitRates.keyRateLimit = checkRateLimit("keyRateLimit", o.keyRateLimit, false)!;
  if (o.random !== undefined && typeof o.random !== "function") {
    throw new InvalidArgumentError("random", "must be a function returning a number in [0, 1)");
  }
  return {
    name: o.name === undefined ? "default" : checkName("name", o.name),
    maxParallelism: explicit.maxParallelism ?? DEFAULT_MAX_PARALLELISM,
    keyParallelism: explicit.keyParallelism ?? null,
    explicit,
    explicitRates,
    retryActionsByDefault: o.retryActionsByDefault ?? false,
    defaultRetryBehavior:
      o.defaultRetryBehavior === undefined
        ? { ...DEFAULT_RETRY_BEHAVIOR }
        : checkRetryBehavior("defaultRetryBehavior", o.defaultRetryBehavior),
    logLevel: explicit.logLevel ?? "REPORT",
    leaseMs: o.leaseMs === undefined ? 30_000 : checkInt("leaseMs", o.leaseMs, 100, DAY),
    actionTimeoutMs: o.actionTimeoutMs === undefined ? null : checkInt("actionTimeoutMs", o.actionTimeoutMs, 1, 7 * DAY),
    retentionMs: o.retentionMs === undefined ? DAY : checkInt("retentionMs", o.retentionMs, 0, 10 * 365 * DAY),
    logger: o.logger === undefined ? console : checkLogger(o.logger),
    clock: o.clock === undefined ? systemClock : checkClock(o.clock),
    random: o.random ?? Math.random,
    reportIntervalMs: o.reportIntervalMs === undefined ? MINUTE : checkInt("reportIntervalMs", o.reportIntervalMs, 100, DAY),
    maintenanceIntervalMs:
      o.maintenanceIntervalMs === undefined ? SECOND : checkInt("maintenanceIntervalMs", o.maintenanceIntervalMs, 10, HOUR),
    pollIntervalMs: o.pollIntervalMs === undefined ? null : checkInt("pollIntervalMs", o.pollIntervalMs, 1, HOUR),
    concurrency: o.concurrency === undefined ? null : checkInt("concurrency", o.concurrency, 1, MAX_PARALLELISM),
    telemetry: o.telemetry === undefined ? null : checkTelemetry(o.telemetry),
  };
}

/** Options of `configure()`: stored in the database, obeyed by every worker from its next claim. */
export interface ConfigureOptions {
  /** Integer 0..10000; 0 pauses the pool. */
  maxParallelism?: number;
  /** New log level for every process of the pool. */
  logLevel?: LogLevel;
  /** Integer 1..10000: most running attempts per key; null removes the per-key limit. */
  keyParallelism?: number | null;
  /** `{ limit, periodMs }`: most attempt starts of the pool in any window; null removes the limit. */
  rateLimit?: RateLimit | null;
  /** `{ limit, periodMs }`: most attempt starts per key in any window; null removes the limit. */
  keyRateLimit?: RateLimit | null;
}

const CONFIGURE_KEYS = optionKeys<ConfigureOptions>()({
  maxParallelism: true,
  logLevel: true,
  keyParallelism: true,
  rateLimit: true,
  keyRateLimit: true,
});

/** Validates `configure()` input. */
export function checkConfigure(options: unknown): ConfigureOptions {
  const o = checkOptionKeys(
    "options",
    options,
    CONFIGURE_KEYS,
    "configure()",
    "",
    "is not a runtime option; configure() accepts maxParallelism, keyParallelism, logLevel, rateLimit and keyRateLimit",
  );
  const out: ConfigureOptions = {};
  if (o.maxParallelism !== undefined) out.maxParallelism = checkMaxParallelism("maxParallelism", o.maxParallelism);
  if (o.logLevel !== undefined) out.logLevel = checkLogLevel("logLevel", o.logLevel);
  if (o.keyParallelism !== undefined) out.keyParallelism = checkKeyParallelism("keyParallelism", o.keyParallelism, true);
  if (o.rateLimit !== undefined) out.rateLimit = checkRateLimit("rateLimit", o.rateLimit, true);
  if (o.keyRateLimit !== undefined) out.keyRateLimit = checkRateLimit("keyRateLimit", o.keyRateLimit, true);
  return out;
}
