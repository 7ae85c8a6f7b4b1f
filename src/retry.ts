/**
 * Retry policy: exponential backoff with jitter, and the error that stops retries.
 */
import type { RetryBehavior } from "./types.js";

/** Thrown by an action to fail its work at once, whatever its retry behaviour. */
export class NonRetryableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NonRetryableError";
  }
}

/** True for a {@link NonRetryableError}, also across module copies (checked by name). */
export function isNonRetryable(e: unknown): boolean {
  return e instanceof NonRetryableError || (e instanceof Error && e.name === "NonRetryableError");
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
 * `random` returns a number in [0, 1), like Math.random.
 */
export function backoffMs(behavior: RetryBehavior, failedAttempt: number, random: () => number): number {
  const raw = behavior.initialBackoffMs * Math.pow(behavior.base, Math.max(0, failedAttempt - 1));
  const delay = raw * (0.5 + random());
  // Huge exponents overflow to Infinity; the scheduler clamps far-future times anyway.
  return Number.isFinite(delay) ? delay : Number.MAX_SAFE_INTEGER;
}

/** Whether another attempt is allowed after `attemptsSoFar` attempts have been made. */
export function canRetry(behavior: RetryBehavior | null, attemptsSoFar: number): boolean {
  return behavior !== null && attemptsSoFar < behavior.maxAttempts;
}
