/**
 * Guarantee 11: a uniqueKey is unique among a pool's pending work, enforced by the store:
 * "keep" returns the pending work's id, "replace" replaces its fields (debounce); the key
 * is free again once the work starts; transactions and races leave one work.
 */
import { describe, expect, test } from "vitest";
import { Workpool } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { deferred, useTestContext } from "./context.js";

export function defineUniqueKeyTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("unique keys", () => {
    const ctx = useTestContext(harness);

    test('"keep" (the default) returns the pending work\'s id and changes nothing', async () => {
      const t = await ctx();
      const pool = t.pool();
      const seen: unknown[] = [];
      const job = pool.defineAction("job", (_c, args: { n: number }) => void seen.push(args.n));
      const enqueued: string[] = [];
      pool.on("enqueued", (e) => enqueued.push(e.workId));
      const id = await pool.enqueueAction(job, { n: 1 }, { uniqueKey: "report:7", runAfter: 1000 });
      expect(await pool.enqueueAction(job, { n: 2 }, { uniqueKey: "report:7" })).toBe(id);
      expect(await pool.enqueueAction(job, { n: 3 }, { uniqueKey: "report:7", onConflict: "keep", priority: -5 })).toBe(id);
      expect(enqueued).toEqual([id]);
      expect(await harness.countWorkRows(t.h)).toBe(1);
      expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 0 });
      // Another key, another pool: no conflict.
      expect(await pool.enqueueAction(job, { n: 4 }, { uniqueKey: "report:8" })).not.toBe(id);
      const other = t.pool({ name: "other" });
      const otherJob = other.defineAction("job", () => undefined);
      expect(await other.enqueueAction(otherJob, { n: 5 }, { uniqueKey: "report:7" })).not.toBe(id);
      t.clock.advance(1000);
      await pool.runOnce();
      expect(seen.sort()).toEqual([1, 4]);
    });

    test('"replace" debounces: runAfter with replace runs once, after the last call, with its args', async () => {
      const t = await ctx();
      const pool = t.pool();
      const runs: unknown[] = [];
      const reindex = pool.defineAction("reindex", (_c, args: { doc: string; edit: number }) => void runs.push(args));
      const events: unknown[] = [];
      pool.on("enqueued", (e) => events.push({ workId: e.workId, runAt: e.runAt, replaced: e.replaced }));
      const opts = { uniqueKey: "reindex:doc-1", onConflict: "replace", runAfter: 5000 } as const;
      const id = await pool.enqueueAction(reindex, { doc: "doc-1", edit: 1 }, opts);
      for (let edit = 2; edit <= 4; edit++) {
        t.clock.advance(1000);
        expect(await pool.enqueueAction(reindex, { doc: "doc-1", edit }, opts)).toBe(id);
      }
      const last = t.clock.now();
      expect(events).toHaveLength(4);
      expect(events[3]).toEqual({ workId: id, runAt: last + 5000, replaced: true });
      t.clock.advance(4999);
      expect((await pool.runOnce()).claimed).toBe(0);
      t.clock.advance(1);
      expect((await pool.runOnce()).claimed).toBe(1);
      expect(runs).toEqual([{ doc: "doc-1", edit: 4 }]);
      expect(await harness.countWorkRows(t.h)).toBe(1);
    });

    test('"replace" replaces args, runAt, priority, key, onComplete and context', async () => {
      const t = await ctx();
      const pool = t.pool({ keyParallelism: 1 });
      const job = pool.defineAction("job", (_c, n: number) => n * 10);
      const results: unknown[] = [];
      const one = pool.defineOnComplete("one", (_c, a) => void results.push(["one", a.context]));
      const two = pool.defineOnComplete("two", (_c, a) => void results.push(["two", a.context, a.result]));
      const id = await pool.enqueueAction(job, 1, { uniqueKey: "u", runAfter: 60_000, onComplete: one, context: "c1", key: "a" });
      const same = await pool.enqueueAction(job, 2, {
        uniqueKey: "u",
        onConflict: "replace",
        priority: 4,
        key: "b",
        onComplete: two,
        context: "c2",
      });
      expect(same).toBe(id);
      expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 0, priority: 4, key: "b" });
      await pool.runOnce();
      expect(results).toEqual([["two", "c2", { kind: "success", returnValue: 20 }]]);
    });

    test("the key is free once the work starts: running and retrying work do not hold it", async () => {
      const t = await ctx();
      const pool = t.pool();
      const gate = deferred();
      let attempts = 0;
      const job = pool.defineAction("job", async () => {
        if (attempts++ === 0) throw new Error("first attempt fails");
        await gate.promise;
      });
      const retry = { maxAttempts: 3, initialBackoffMs: 100, base: 2 };
      const first = await pool.enqueueAction(job, {}, { uniqueKey: "once", retry });
      await pool.runOnce();
      // Waiting to retry: started once, so the key is free.
      expect(await pool.status(first)).toMatchObject({ state: "pending", previousAttempts: 1 });
      const second = await pool.enqueueAction(job, {}, { uniqueKey: "once", runAfter: 10_000 });
      expect(second).not.toBe(first);
      t.clock.advance(100);
      const step = pool.runOnce();
      while (pool.running < 1) await new Promise((r) => setImmediate(r));
      expect(await pool.status(first)).toMatchObject({ state: "running" });
      // The second is pending with the key: it is kept.
      expect(await pool.enqueueAction(job, {}, { uniqueKey: "once" })).toBe(second);
      gate.resolve();
      await step;
      expect(await harness.countWorkRows(t.h)).toBe(2);
    });

    test("a batch with a uniqueKey is one work: its repeats resolve in order", async () => {
      const t = await ctx();
      const pool = t.pool();
      const seen: number[] = [];
      const job = pool.defineAction("job", (_c, n: number) => void seen.push(n));
      const kept = await pool.enqueueActionBatch(job, [1, 2, 3], { uniqueKey: "k" });
      expect(new Set(kept).size).toBe(1);
      expect(kept).toHaveLength(3);
      const replaced = await pool.enqueueActionBatch(job, [4, 5, 6], { uniqueKey: "r", onConflict: "replace" });
      expect(new Set(replaced).size).toBe(1);
      // Into existing pending work: every position gets its id.
      expect(await pool.enqueueActionBatch(job, [7, 8], { uniqueKey: "k", onConflict: "replace" })).toEqual([kept[0], kept[0]]);
      expect(await harness.countWorkRows(t.h)).toBe(2);
      await pool.runOnce();
      expect(seen.sort()).toEqual([6, 8]);
      await expect(pool.enqueueActionBatch(job, [1, (() => 2) as never], { uniqueKey: "x" })).rejects.toThrow(/argsArray\[1\]/);
    });

    // Two stores, as two processes would have: each on its own connection(s).
    test("two stores racing for one key make one work", async () => {
      const t = await ctx();
      const other = harness.openAnotherStore(t.h);
      try {
        const mine = t.pool({ name: "race" });
        const theirs = new Workpool(other, { name: "race", logger: t.logger });
        const jobs = [mine.defineAction("job", () => undefined), theirs.defineAction("job", () => undefined)] as const;
        const calls = Array.from({ length: 20 }, (_, i) => {
          const options = { uniqueKey: "shared", onConflict: i % 3 ? "keep" : "replace" } as const;
          return i % 2 ? theirs.enqueueAction(jobs[1], { i }, options) : mine.enqueueAction(jobs[0], { i }, options);
        });
        const ids = await Promise.all(calls);
        expect(new Set(ids).size).toBe(1);
        expect(await harness.countWorkRows(t.h)).toBe(1);
      } finally {
        await other.close();
      }
    });

    test("a unique key inside a transaction: nothing is left after a rollback, and replace takes effect only on commit", async () => {
      const t = await ctx();
      const pool = t.pool();
      const seen: number[] = [];
      const job = pool.defineAction("job", (_c, n: number) => void seen.push(n));
      await pool.runOnce();
      let rolledBack: unknown;
      await harness.inAppTransaction(t.h, (tx) => (rolledBack = pool.enqueueAction(job, 1, { uniqueKey: "t", tx })), true);
      await rolledBack;
      expect(await harness.countWorkRows(t.h)).toBe(0);
      const id = await pool.enqueueAction(job, 2, { uniqueKey: "t" });
      expect(id).not.toBe(await rolledBack);
      let replaced: unknown;
      await harness.inAppTransaction(
        t.h,
        (tx) => (replaced = pool.enqueueAction(job, 3, { uniqueKey: "t", onConflict: "replace", tx })),
        true,
      );
      expect(await replaced).toBe(id);
      let committed: unknown;
      await harness.inAppTransaction(
        t.h,
        (tx) => (committed = pool.enqueueAction(job, 4, { uniqueKey: "t", onConflict: "replace", tx })),
        false,
      );
      expect(await committed).toBe(id);
      await pool.runOnce();
      expect(seen).toEqual([4]);
    });
  });
}
