/**
 * The retrier's backoff mapping, without a store: the pool behaviour derived from the
 * retrier's options gives exactly the reference's delays, initialBackoffMs *
 * base^(numFailures + 1) times jitter, and allows exactly maxFailures retries.
 */
import { describe, expect, test } from "vitest";
import { backoffMs, canRetry } from "../../src/retry.js";
import { resolveRetrierOptions, retrierRetryBehavior } from "../../src/retrier/options.js";

describe("ActionRetrier backoff mapping", () => {
  test("defaults: 250 ms, base 2, 4 failures -> pool { maxAttempts 5, initialBackoffMs 500, base 2 }", () => {
    const o = resolveRetrierOptions(undefined);
    expect(o).toEqual({ name: "action-retrier", initialBackoffMs: 250, base: 2, maxFailures: 4 });
    expect(retrierRetryBehavior(o)).toEqual({ maxAttempts: 5, initialBackoffMs: 500, base: 2 });
  });

  test.each([
    { initialBackoffMs: 250, base: 2, maxFailures: 4 },
    { initialBackoffMs: 100, base: 3, maxFailures: 6 },
    { initialBackoffMs: 1, base: 1, maxFailures: 2 },
    { initialBackoffMs: 0, base: 10, maxFailures: 1 },
    { initialBackoffMs: 37.5, base: 1.5, maxFailures: 9 },
  ])("delays and attempt count match the reference for %o", (options) => {
    const behavior = retrierRetryBehavior(options);
    for (const r of [0, 0.25, 0.5, 0.999]) {
      for (let numFailures = 0; numFailures < options.maxFailures; numFailures++) {
        // The pool is asked after attempt n = numFailures + 1 failed.
        const attempt = numFailures + 1;
        const reference = options.initialBackoffMs * Math.pow(options.base, numFailures + 1) * (0.5 + r);
        expect(backoffMs(behavior, attempt, () => r)).toBeCloseTo(reference, 9);
        expect(canRetry(behavior, attempt)).toBe(true);
      }
    }
    // The reference stops retrying once numFailures reaches maxFailures: attempt maxFailures + 1 is the last.
    expect(canRetry(behavior, options.maxFailures + 1)).toBe(false);
  });
});
