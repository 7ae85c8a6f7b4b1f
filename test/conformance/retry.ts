/**
 * Guarantee 4: retries with exponential backoff and jitter, NonRetryableError, and work
 * waiting out its backoff holding no slot.
 */
import { describe, expect, test } from "vitest";
import { NonRetryableError } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { nextEvent, useTestContext } from "./context.js";

export function defineRetryTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("retries", () => {
    const ctx = useTestContext(harness);

    test("backoff is initialBackoffMs * base^(n-1) (jitter 1.0 here), and the work is pending meanwhile", async () => {
      const t = await ctx();
      const pool = t.pool({ defaultRetryBehavior: { maxAttempts: 4, initialBackoffMs: 100, base: 3 } });
      let calls = 0;
      const flaky = pool.defineAction("flaky", (c) => {
        calls++;
        if (c.attempt < 3) throw new Error(`boom ${c.attempt}`);
        return c.attempt;
      });
      const id = await pool.enqueueAction(flaky, {}, { retry: true });
      await pool.runOnce();
      expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 1 });
      t.clock.advance(99);
      expect((await pool.runOnce()).claimed).toBe(0);
      t.clock.advance(1);
      expect((await pool.runOnce()).claimed).toBe(1);
      expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 2 });
      t.clock.advance(299);
      expect((await pool.runOnce()).claimed).toBe(0);
      t.clock.advance(1);
      await pool.runOnce();
      expect(calls).toBe(3);
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: 3 } });
    });

    test("jitter stays in [0.5, 1.5) of the nominal delay", async () => {
      for (const [r, expected] of [
        [0, 500],
        [0.999, 1499],
      ] as const) {
        const t = await ctx();
        const pool = t.pool({ random: () => r, defaultRetryBehavior: { maxAttempts: 2, initialBackoffMs: 1000, base: 2 } });
        const f = pool.defineAction("f", () => {
          throw new Error("x");
        });
        await pool.enqueueAction(f, {}, { retry: true });
        await pool.runOnce();
        t.clock.advance(expected - 1);
        expect((await pool.runOnce()).claimed).toBe(0);
        t.clock.advance(1);
        expect((await pool.runOnce()).claimed).toBe(1);
      }
    });

    test("after maxAttempts the work fails with the last error", async () => {
      const t = await ctx();
      const pool = t.pool();
      const f = pool.defineAction("f", (c) => {
        throw new Error(`fail #${c.attempt}`);
      });
      const id = await pool.enqueueAction(f, {}, { retry: { maxAttempts: 2, initialBackoffMs: 10, base: 2 } });
      await pool.runOnce();
      t.clock.advance(10);
      await pool.runOnce();
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "failed", error: "fail #2" } });
    });

    test("without retry an action fails after one attempt; retryActionsByDefault turns retry on", async () => {
      const t = await ctx();
      const plain = t.pool({ name: "plain" });
      const f = plain.defineAction("f", () => {
        throw new Error("once");
      });
      const id = await plain.enqueueAction(f, {});
      await plain.runOnce();
      expect(await plain.status(id)).toMatchObject({ state: "finished", result: { kind: "failed" } });
      const retrying = t.pool({ name: "retrying", retryActionsByDefault: true });
      const g = retrying.defineAction("g", () => {
        throw new Error("again");
      });
      const id2 = await retrying.enqueueAction(g, {});
      await retrying.runOnce();
      expect(await retrying.status(id2)).toEqual({ state: "pending", previousAttempts: 1 });
      const id3 = await retrying.enqueueAction(g, {}, { retry: false });
      await retrying.runOnce();
      expect(await retrying.status(id3)).toMatchObject({ state: "finished", result: { kind: "failed" } });
    });

    test("NonRetryableError fails the work at once", async () => {
      const t = await ctx();
      const pool = t.pool();
      let calls = 0;
      const f = pool.defineAction("f", () => {
        calls++;
        throw new NonRetryableError("card declined");
      });
      const id = await pool.enqueueAction(f, {}, { retry: true });
      await pool.runOnce();
      t.clock.advance(3_600_000);
      await pool.runOnce();
      expect(calls).toBe(1);
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "failed", error: "card declined" } });
    });

    test("work waiting out its backoff holds no slot", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 1 });
      const f = pool.defineAction("f", () => {
        throw new Error("x");
      });
      const ok = pool.defineAction("ok", () => "ok");
      await pool.enqueueAction(f, {}, { retry: { maxAttempts: 3, initialBackoffMs: 60_000, base: 1 } });
      await pool.runOnce();
      const id = await pool.enqueueAction(ok, {});
      expect((await pool.runOnce()).claimed).toBe(1);
      expect(await pool.status(id)).toMatchObject({ state: "finished" });
    });

    test("a retry emits a completed event with status retrying and the error", async () => {
      const t = await ctx();
      const pool = t.pool();
      const f = pool.defineAction("f", () => {
        throw new Error("transient");
      });
      await pool.enqueueAction(f, {}, { retry: true });
      const ev = nextEvent(pool, "completed");
      await pool.runOnce();
      expect(await ev).toMatchObject({ status: "retrying", attempts: 1, error: "transient", fnName: "f" });
    });
  });
}
