/**
 * Guarantee 2: at most maxParallelism attempts of a pool run at once, counted in the
 * store across every worker; 0 pauses; configure() changes it for every worker.
 */
import { describe, expect, test } from "vitest";
import type { StoreHarness } from "./harness.js";
import { deferred, useTestContext } from "./context.js";

export function defineParallelismTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("global parallelism", () => {
    const ctx = useTestContext(harness);

    test("two workers on one store together never run more than maxParallelism", async () => {
      const t = await ctx();
      const a = t.pool({ name: "p", maxParallelism: 3 });
      const b = t.pool({ name: "p", maxParallelism: 3 });
      const gate = deferred();
      let live = 0;
      let peak = 0;
      const fn = async () => {
        live++;
        peak = Math.max(peak, live);
        await gate.promise;
        live--;
      };
      const job = a.defineAction("job", fn);
      b.defineAction("job", fn);
      await a.enqueueActionBatch(
        job,
        Array.from({ length: 10 }, (_, i) => i),
      );
      // Count claims, to release the handlers only once both workers have claimed.
      let claims = 0;
      const claim = t.driver.claim.bind(t.driver);
      t.driver.claim = async (pool, opts) => {
        const r = await claim(pool, opts);
        claims++;
        return r;
      };
      const stepA = a.runOnce();
      const stepB = b.runOnce();
      while (claims < 2) await new Promise((r) => setImmediate(r));
      const counts = await t.driver.counts("p", t.clock.now());
      expect(counts.running).toBe(3);
      expect(counts.pending).toBe(7);
      gate.resolve();
      const [ra, rb] = await Promise.all([stepA, stepB]);
      expect(ra.claimed + rb.claimed).toBe(3);
      expect(peak).toBe(3);
      let done = 3;
      while (done < 10) done += (await a.runOnce()).claimed;
      expect(peak).toBe(3);
    });

    test("maxParallelism 0 pauses the pool; configure() resumes it for every worker", async () => {
      const t = await ctx();
      const admin = t.pool({ name: "q", maxParallelism: 0 });
      const worker = t.pool({ name: "q" });
      const job = admin.defineAction("job", () => 1);
      worker.defineAction("job", () => 1);
      await admin.enqueueActionBatch(job, [1, 2, 3, 4]);
      await admin.runOnce(); // stores maxParallelism 0
      expect((await worker.runOnce()).claimed).toBe(0);
      await admin.configure({ maxParallelism: 2 });
      expect((await worker.runOnce()).claimed).toBe(2);
      expect((await t.driver.readPoolConfig("q"))?.maxParallelism).toBe(2);
    });

    test("configure() validates before writing", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "r", maxParallelism: 4 });
      await pool.runOnce();
      await expect(pool.configure({ maxParallelism: 10_001 })).rejects.toThrow(/maxParallelism: must be an integer from 0 to 10000/);
      await expect(pool.configure({ maxParallelism: 1.5 })).rejects.toThrow(/maxParallelism/);
      await expect(pool.configure({ logLevel: "LOUD" as never })).rejects.toThrow(
        /logLevel: must be one of DEBUG, TRACE, INFO, REPORT, WARN, ERROR/,
      );
      await expect(pool.configure({ leaseMs: 5 } as never)).rejects.toThrow(/leaseMs: is not a runtime option/);
      expect((await t.driver.readPoolConfig("r"))?.maxParallelism).toBe(4);
    });

    test("concurrency caps what one process runs, under the global limit", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 10, concurrency: 2 });
      const gate = deferred();
      const job = pool.defineAction("job", () => gate.promise);
      await pool.enqueueActionBatch(job, [1, 2, 3, 4, 5]);
      const step = pool.runOnce();
      while (pool.running < 2) await new Promise((r) => setImmediate(r));
      gate.resolve();
      expect((await step).claimed).toBe(2);
      expect(() => t.pool({ concurrency: 0 })).toThrow(/concurrency: must be an integer from 1 to 10000/);
    });

    test("pools sharing a store have separate limits", async () => {
      const t = await ctx();
      const one = t.pool({ name: "one", maxParallelism: 1 });
      const two = t.pool({ name: "two", maxParallelism: 2 });
      const gate = deferred();
      const j1 = one.defineAction("j", () => gate.promise);
      const j2 = two.defineAction("j", () => gate.promise);
      await one.enqueueActionBatch(j1, [1, 2, 3]);
      await two.enqueueActionBatch(j2, [1, 2, 3]);
      const s1 = one.runOnce();
      const s2 = two.runOnce();
      while (one.running + two.running < 3) await new Promise((r) => setImmediate(r));
      gate.resolve();
      expect((await s1).claimed).toBe(1);
      expect((await s2).claimed).toBe(2);
    });
  });
}
