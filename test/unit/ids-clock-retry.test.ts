import { describe, expect, test } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { isWorkId, newWorkId, workIdTime } from "../../src/ids.js";
import { backoffMs, canRetry, isNonRetryable, NonRetryableError } from "../../src/retry.js";

describe("work ids", () => {
  test("are 26 characters, unique, time-sortable, and carry their time", () => {
    const t = Date.UTC(2031, 5, 6, 7, 8, 9, 10);
    const ids = Array.from({ length: 1000 }, () => newWorkId(t));
    expect(new Set(ids).size).toBe(1000);
    expect(ids.every(isWorkId)).toBe(true);
    expect(workIdTime(ids[0]!)).toBe(t);
    expect(newWorkId(t) < newWorkId(t + 1)).toBe(true);
    expect(isWorkId("x")).toBe(false);
    expect(isWorkId(42)).toBe(false);
    expect(isWorkId("0".repeat(25) + "U")).toBe(false); // U is not in the alphabet
  });

  test("made in one millisecond, they increase in the order they are made", () => {
    const t = Date.UTC(2031, 5, 6, 7, 8, 9, 10);
    const ids = Array.from({ length: 500 }, () => newWorkId(t));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(500);
  });
});

describe("ManualClock", () => {
  test("fires due timers in time order, each at its own time", () => {
    const c = new ManualClock(1000);
    const fired: [string, number][] = [];
    c.setTimeout(() => fired.push(["b", c.now()]), 20);
    c.setTimeout(() => fired.push(["a", c.now()]), 10);
    const cancelled = c.setTimeout(() => fired.push(["x", c.now()]), 15);
    c.clearTimeout(cancelled);
    c.advance(15);
    expect(fired).toEqual([["a", 1010]]);
    c.advance(100);
    expect(fired).toEqual([
      ["a", 1010],
      ["b", 1020],
    ]);
    expect(c.now()).toBe(1115);
    expect(c.pendingTimers).toBe(0);
  });
  test("timers scheduled by timers fire within the same advance if due", () => {
    const c = new ManualClock(0);
    const fired: number[] = [];
    c.setTimeout(() => c.setTimeout(() => fired.push(c.now()), 5), 5);
    c.advance(10);
    expect(fired).toEqual([10]);
  });
  test("rejects moving backwards by a negative amount", () => {
    expect(() => new ManualClock(0).advance(-1)).toThrow(/finite number >= 0/);
  });
});

describe("backoff", () => {
  const b = { maxAttempts: 5, initialBackoffMs: 250, base: 2 };
  test("is initialBackoffMs * base^(attempt-1) times jitter in [0.5, 1.5)", () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(b, n, () => 0.5))).toEqual([250, 500, 1000, 2000]);
    expect(backoffMs(b, 3, () => 0)).toBe(500);
    expect(backoffMs(b, 3, () => 0.999999)).toBeLessThan(1500);
  });
  test("never returns Infinity", () => {
    expect(Number.isFinite(backoffMs({ maxAttempts: 1000, initialBackoffMs: 1e9, base: 1e9 }, 999, () => 0.5))).toBe(true);
  });
  test("canRetry counts attempts against maxAttempts", () => {
    expect(canRetry(b, 4)).toBe(true);
    expect(canRetry(b, 5)).toBe(false);
    expect(canRetry(null, 1)).toBe(false);
  });
  test("NonRetryableError is recognised, also by name", () => {
    expect(isNonRetryable(new NonRetryableError("x"))).toBe(true);
    const copy = new Error("y");
    copy.name = "NonRetryableError";
    expect(isNonRetryable(copy)).toBe(true);
    expect(isNonRetryable(new Error("z"))).toBe(false);
  });
});
