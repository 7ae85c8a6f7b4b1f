/**
 * Guarantee 5: onComplete runs exactly once per finished work, as a mutation in the
 * transaction of the state change; if it throws it rolls back and is retried.
 */
import { describe, expect, test } from "vitest";
import type { OnCompleteArgs } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext } from "./context.js";

export function defineOnCompleteTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("onComplete", () => {
    const ctx = useTestContext(harness);

    test("receives workId, context and the result (success, failed, canceled), once each", async () => {
      const t = await ctx();
      const pool = t.pool();
      const seen: OnCompleteArgs<{ user: number }, string>[] = [];
      const done = pool.defineOnComplete<{ user: number }, string>("done", (_c, args) => {
        seen.push(args);
      });
      const ok = pool.defineAction("ok", () => "fine");
      const bad = pool.defineAction("bad", (): string => {
        throw new Error("nope");
      });
      const a = await pool.enqueueAction(ok, {}, { onComplete: done, context: { user: 1 } });
      const b = await pool.enqueueAction(bad, {}, { onComplete: done, context: { user: 2 } });
      const c = await pool.enqueueAction(ok, {}, { onComplete: done, context: { user: 3 }, runAfter: 1000 });
      await pool.runOnce();
      await pool.cancel(c);
      await pool.runOnce();
      t.clock.advance(5000);
      await pool.runOnce();
      seen.sort((x, y) => x.context.user - y.context.user);
      expect(seen).toEqual([
        { workId: a, context: { user: 1 }, result: { kind: "success", returnValue: "fine" } },
        { workId: b, context: { user: 2 }, result: { kind: "failed", error: "nope" } },
        { workId: c, context: { user: 3 }, result: { kind: "canceled" } },
      ]);
      expect(await pool.status(a)).toMatchObject({ onComplete: { state: "done", failedAttempts: 0 } });
    });

    test("its writes commit in the same transaction, exactly once", async () => {
      const t = await ctx();
      await harness.createAppTable(t.h);
      const pool = t.pool({ maxParallelism: 20 });
      const record = pool.defineOnComplete("record", (c, { workId }) => {
        harness.insertAppRow(c.tx, workId);
      });
      const ok = pool.defineAction("ok", () => 1);
      const ids = await pool.enqueueActionBatch(
        ok,
        Array.from({ length: 25 }, (_, i) => i),
        { onComplete: record },
      );
      await pool.runOnce();
      await pool.runOnce();
      t.clock.advance(60_000);
      await pool.runOnce();
      expect(await harness.countAppRows(t.h)).toBe(ids.length);
    });

    test("a throwing onComplete rolls back, is retried with backoff, and never runs twice", async () => {
      const t = await ctx();
      await harness.createAppTable(t.h);
      const pool = t.pool({ defaultRetryBehavior: { maxAttempts: 5, initialBackoffMs: 1000, base: 2 } });
      let calls = 0;
      const flaky = pool.defineOnComplete("flaky", (c, { workId }) => {
        calls++;
        harness.insertAppRow(c.tx, `${workId}:${calls}`);
        if (calls < 3) throw new Error(`oc fail ${calls}`);
      });
      const ok = pool.defineAction("ok", () => 1);
      const id = await pool.enqueueAction(ok, {}, { onComplete: flaky });
      await pool.runOnce();
      expect(calls).toBe(1);
      expect(await pool.status(id)).toMatchObject({
        state: "finished",
        result: { kind: "success", returnValue: 1 },
        onComplete: { state: "pending", failedAttempts: 1, error: "oc fail 1" },
      });
      t.clock.advance(999);
      await pool.runOnce();
      expect(calls).toBe(1);
      t.clock.advance(1);
      await pool.runOnce();
      expect(calls).toBe(2);
      t.clock.advance(2000);
      await pool.runOnce();
      expect(calls).toBe(3);
      t.clock.advance(100_000);
      await pool.runOnce();
      expect(calls).toBe(3);
      expect(await harness.countAppRows(t.h)).toBe(1);
      expect(await pool.status(id)).toMatchObject({ onComplete: { state: "done", failedAttempts: 2 } });
    });

    test("after repeated failure the error is recorded where status and logs show it", async () => {
      const t = await ctx();
      const pool = t.pool({ defaultRetryBehavior: { maxAttempts: 2, initialBackoffMs: 10, base: 1 } });
      const broken = pool.defineOnComplete("broken", () => {
        throw new Error("db is read-only");
      });
      const ok = pool.defineAction("ok", () => 1);
      const id = await pool.enqueueAction(ok, {}, { onComplete: broken });
      await pool.runOnce();
      t.clock.advance(10);
      await pool.runOnce();
      expect(await pool.status(id)).toMatchObject({ onComplete: { state: "failed", failedAttempts: 2, error: "db is read-only" } });
      expect(t.logger.matching("giving up: db is read-only")).toHaveLength(1);
    });

    test("a mutation's onComplete runs in the mutation's transaction", async () => {
      const t = await ctx();
      await harness.createAppTable(t.h);
      const pool = t.pool();
      const m = pool.defineMutation("m", (c) => {
        harness.insertAppRow(c.tx, "from-mutation");
        return 5;
      });
      const seen: unknown[] = [];
      const oc = pool.defineOnComplete("oc", (c, { result }) => {
        seen.push(result);
        harness.insertAppRow(c.tx, "from-oncomplete");
      });
      await pool.enqueueMutation(m, {}, { onComplete: oc });
      await pool.runOnce();
      expect(seen).toEqual([{ kind: "success", returnValue: 5 }]);
      expect(await harness.countAppRows(t.h)).toBe(2);
    });

    test("finished work with a pending onComplete is not deleted by retention until delivered", async () => {
      const t = await ctx();
      const pool = t.pool({ retentionMs: 1000, defaultRetryBehavior: { maxAttempts: 3, initialBackoffMs: 10_000, base: 1 } });
      let fail = true;
      const oc = pool.defineOnComplete("oc", () => {
        if (fail) throw new Error("later");
      });
      const ok = pool.defineAction("ok", () => 1);
      const id = await pool.enqueueAction(ok, {}, { onComplete: oc });
      await pool.runOnce();
      t.clock.advance(5000);
      await pool.runOnce();
      expect(await pool.status(id)).toMatchObject({ onComplete: { state: "pending" } });
      fail = false;
      t.clock.advance(5000);
      // This tick delivers it, then retention may delete it.
      await pool.runOnce();
      expect(await pool.status(id)).toEqual({ state: "finished" });
      expect(t.logger.matching('"status":"success"')).toHaveLength(1);
    });
  });
}
