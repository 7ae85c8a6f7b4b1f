/**
 * The driver contract, rate limits: a window at `now` counts the starts in
 * `(now - period, now]`; a claim takes no more than the window has room for, and a claim
 * held back says when the window opens.
 */
import { describe, expect, test } from "vitest";
import type { StoreHarness } from "../../conformance/harness.js";
import { claimBy, POOL, row, T0, useDriver } from "./setup.js";

/** Registers the rate-limit tests for one store. */
export function defineRateLimitContract<Tx>(harness: StoreHarness<Tx>): void {
  describe("rate limits", () => {
    const driver = useDriver(harness);

    test("the stored limits are read back, changed one at a time, and removed with null", async () => {
      const d = await driver();
      expect(await d.readRateLimits(POOL)).toEqual({ rateLimit: null, keyRateLimit: null });
      await d.setRateLimits(POOL, { rateLimit: { limit: 2, periodMs: 1000 } });
      await d.setRateLimits(POOL, { keyRateLimit: { limit: 1, periodMs: 500 } });
      expect(await d.readRateLimits(POOL)).toEqual({ rateLimit: { limit: 2, periodMs: 1000 }, keyRateLimit: { limit: 1, periodMs: 500 } });
      await d.setRateLimits(POOL, { rateLimit: null });
      expect(await d.readRateLimits(POOL)).toEqual({ rateLimit: null, keyRateLimit: { limit: 1, periodMs: 500 } });
    });

    test("the pool's window counts starts over (now - period, now]; a claim held back says when it opens", async () => {
      const d = await driver(10);
      await d.setRateLimits(POOL, { rateLimit: { limit: 2, periodMs: 1000 } });
      await d.insertWork(Array.from({ length: 5 }, (_, i) => row(T0 - 10 + i)));
      const first = await d.claim(POOL, claimBy("a", 10, T0));
      expect(first.claimed).toHaveLength(2);
      // The window is full until the starts at T0 leave it, at T0 + period.
      expect(first.nextRunAt).toBe(T0 + 1000);
      expect(await d.countRateLimited(POOL, T0)).toBe(3);
      // At T0 + 999 the window (T0 - 1, T0 + 999] still holds both starts.
      const held = await d.claim(POOL, claimBy("a", 10, T0 + 999));
      expect(held.claimed).toEqual([]);
      expect(held.nextRunAt).toBe(T0 + 1000);
      expect(await d.countRateLimited(POOL, T0 + 999)).toBe(3);
      // At T0 + 1000 the window (T0, T0 + 1000] holds none of them.
      expect(await d.countRateLimited(POOL, T0 + 1000)).toBe(0);
      expect((await d.claim(POOL, claimBy("a", 10, T0 + 1000))).claimed).toHaveLength(2);
      expect((await d.claim(POOL, claimBy("a", 10, T0 + 1000))).claimed).toHaveLength(0);
    });

    test("a key's window holds back only that key's work, and the claim says when it opens", async () => {
      const d = await driver(10);
      await d.setRateLimits(POOL, { keyRateLimit: { limit: 1, periodMs: 1000 } });
      const [a1, a2, b1] = [row(T0 - 3, { key: "a" }), row(T0 - 2, { key: "a" }), row(T0 - 1, { key: "b" })];
      await d.insertWork([a1, a2, b1]);
      expect((await d.claim(POOL, claimBy("w", 10, T0))).claimed.map((r) => r.id)).toEqual([a1.id, b1.id]);
      // Held back by the start of a1, recorded: the key's window opens at T0 + period.
      const held = await d.claim(POOL, claimBy("w", 10, T0));
      expect(held.claimed).toEqual([]);
      expect(held.nextRunAt).toBe(T0 + 1000);
      expect(await d.countRateLimited(POOL, T0 + 999)).toBe(1);
      expect((await d.claim(POOL, claimBy("w", 10, T0 + 999))).claimed).toEqual([]);
      expect((await d.claim(POOL, claimBy("w", 10, T0 + 1000))).claimed.map((r) => r.id)).toEqual([a2.id]);
    });
  });
}
