/**
 * Retry policy: exponential backoff with jitter, and the error that stops retries.
 */
import type { JsonValue, RetryBehavior } from "./types.js";

/**
 * An error carrying JSON `data`: thrown by a handler, its data reaches onComplete and
 * `status` as the failed result's `errorData` (when the work fails for good). The data
 * is checked like a return value: JSON, at most 1 MiB.
 */
export class WorkError<D extends JsonValue = JsonValue> extends Error {
  /** Structured details of the failure, kept with the result. */
  readonly data: D;

  constructor(message: string, data: D, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "WorkError";
    this.data = data;
  }
}

/** Thrown by an action to fail its work at once, whatever its retry behaviour; `data` as with {@link WorkError}. */
export class NonRetryableError extends Error {
  /** Structured details of the failure, when given. */
  readonly data?: JsonValue;

  constructor(message: string, options?: { cause?: unknown; data?: JsonValue }) {
    super(message, options);
    this.name = "NonRetryableError";
    if (options?.data !== undefined) this.data = options.data;
  }
}

/**
 * The `data` of a thrown {@link WorkError} or {@link NonRetryableError} (also across
 * module copies, checked by name), or undefined.
 */
export function thrownData(e: unknown): unknown {
  try {
    if (!(e instanceof Error) || (e.name !== "WorkError" && e.name !== "NonRetryableError")) return undefined;
    return (e as { data?: unknown }).data;
  } catch {
    return undefined;
  }
}

/** True for a {@link NonRetryableError}, also across module copies (checked by name). */
export function isNonRetryable(e: unknown): boolean {
  try {
    return e instanceof NonRetryableError || (e instanceof Error && e.name === "NonRetryableError");
  } catch {
    // A thrown value whose name cannot be read is an ordinary failure.
    return false;
  }
}

/** The retry behaviour used when `retry: true` and the pool sets none. */
export const DEFAULT_RETRY_BEHAVIOR: Readonly<RetryBehavior> = Object.freeze({
  maxAttempts: 5,
  initialBackoffMs: 250,
  base: 2,
});

/**
 * Delay before the attempt after `failedAttempt` (1-based):
 * `initialBackoffMs * base^(failedAttempt - 1)`, times a jitter factor in [0.5, 1.5).
 * `random` returns a number in [0, 1), like Math.random; `report` hears when it does not.
 */
export function backoffMs(
  behavior: RetryBehavior,
  failedAttempt: number,
  random: () => number,
  report: (message: string) => void = noReport,
): number {
  const raw = behavior.initialBackoffMs * Math.pow(behavior.base, Math.max(0, failedAttempt - 1));
  const delay = raw * (0.5 + checkedJitter(random, report));
  // Huge exponents overflow to Infinity; the scheduler clamps far-future times anyway.
  return Number.isFinite(delay) ? delay : Number.MAX_SAFE_INTEGER;
}

/** Whether another attempt is allowed after `attemptsSoFar` attempts have been made. */
export function canRetry(behavior: RetryBehavior | null, attemptsSoFar: number): boolean {
  return behavior !== null && attemptsSoFar < behavior.maxAttempts;
}

/**
 * Draws from an injected jitter source, which must return a number in [0, 1). Anything
 * else (NaN, 1, a throw) would schedule a retry at a nonsensical time: it is passed to
 * `report` and Math.random is used for that draw.
 */
function checkedJitter(random: () => number, report: (message: string) => void): number {
  let r: unknown;
  try {
    r = random();
  } catch (e) {
    r = e;
  }
  if (typeof r === "number" && r >= 0 && r < 1) return r;
  report(
    `workpool: random: returned ${typeof r === "number" ? String(r) : "something that is not a number"}; it must return a number in [0, 1), like Math.random. Using Math.random for this draw`,
  );
  return Math.random();
}

function noReport(): void {}
