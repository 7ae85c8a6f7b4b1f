/**
 * Guarantee 14, reading: the admin API sees every pool of a store, lists its work with
 * each filter, and shows one work in full, with the error of every failed attempt, with
 * no handler loaded in the admin.
 */
import { describe, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import { NonRetryableError, WorkError, type WorkId } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { deferred, nextEvent, T0, useTestContext } from "./context.js";

export function defineAdminReadTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("admin: reading", () => {
    const ctx = useTestContext(harness);

    test("pools() reports every pool with counts by state, the oldest due work's age and the last minute", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const pool = t.pool({ name: "mail", maxParallelism: 4 });
      const release = deferred();
      const slow = pool.defineAction("slow", () => release.promise);
      const ok = pool.defineAction("ok", () => 1);
      const bad = pool.defineAction("bad", () => {
        throw new NonRetryableError("no");
      });
      const flaky = pool.defineAction("flaky", () => {
        throw new Error("again");
      });
      await pool.enqueueAction(ok, {});
      await pool.enqueueAction(bad, {});
      await pool.enqueueAction(flaky, {}, { retry: { maxAttempts: 3, initialBackoffMs: 60_000, base: 2 } });
      const toCancel = await pool.enqueueAction(ok, {}, { runAfter: 500_000 });
      await pool.runOnce();
      await pool.cancel(toCancel);
      await pool.enqueueAction(slow, {});
      const started = nextEvent(pool, "started");
      const step = pool.runOnce();
      await started;
      t.clock.advance(1000);
      await pool.enqueueAction(ok, {});
      await pool.enqueueAction(ok, {}, { runAfter: 100_000 });
      t.clock.advance(5000);
      // A pool with work but no stored configuration (never started), and one with neither.
      const other = t.pool({ name: "other" });
      await other.enqueueAction(
        other.defineAction("x", () => 1),
        {},
      );
      await t.pool({ name: "empty" }).configure({ maxParallelism: 7, keyParallelism: 2 });

      const pools = await admin.pools();
      expect(pools.map((p) => p.name)).toEqual(["empty", "mail", "other"]);
      expect(pools[1]).toEqual({
        name: "mail",
        maxParallelism: 4,
        pausedFrom: null,
        keyParallelism: null,
        rateLimit: null,
        keyRateLimit: null,
        counts: { pending: 2, retrying: 1, running: 1, success: 1, failed: 1, canceled: 1 },
        oldestPendingAgeMs: 5000,
        lastMinute: { started: 4, finished: 3, meanWaitMs: 0 },
      });
      expect(pools[0]).toMatchObject({
        maxParallelism: 7,
        keyParallelism: 2,
        counts: { pending: 0, running: 0 },
        oldestPendingAgeMs: null,
      });
      expect(pools[2]).toMatchObject({ name: "other", maxParallelism: 10, counts: { pending: 1 }, oldestPendingAgeMs: 0 });
      release.resolve();
      await step;
      t.clock.advance(61_000);
      const later = (await admin.pools())[1]!;
      expect(later.lastMinute).toEqual({ started: 0, finished: 0, meanWaitMs: null });
      expect(later.counts).toMatchObject({ running: 0, success: 2 });
    });

    test("pools() gives the mean wait to start of the running and finished work that started in the last minute", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const pool = t.pool({ name: "mail" });
      const release = deferred();
      const ok = pool.defineAction("ok", () => 1);
      const slow = pool.defineAction("slow", () => release.promise);
      const flaky = pool.defineAction("flaky", () => {
        throw new Error("again");
      });
      await pool.enqueueAction(ok, {});
      await pool.enqueueAction(slow, {}, { runAfter: 1000 });
      t.clock.advance(3000);
      // Started now: ok waited 3000 ms, slow 2000 ms (due 1000 ms after it was enqueued); the
      // flaky one waited 0 ms, but it is waiting to retry now, with a new due time: not counted.
      await pool.enqueueAction(flaky, {}, { retry: { maxAttempts: 3, initialBackoffMs: 60_000, base: 2 } });
      let completed = 0;
      const recorded = new Promise<void>((resolve) => pool.on("completed", () => ++completed === 2 && resolve()));
      const step = pool.runOnce();
      await recorded;
      expect((await admin.pools())[0]!.lastMinute).toEqual({ started: 3, finished: 1, meanWaitMs: 2500 });
      release.resolve();
      await step;
    });

    test("list() filters by state, kind of ending, handler and search, newest first", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const pool = t.pool({ name: "p" });
      const ok = pool.defineAction("send.email", () => 1);
      const bad = pool.defineAction("bad", () => {
        throw new Error("no");
      });
      const flaky = pool.defineAction("flaky", () => {
        throw new Error("later");
      });
      const ids: Record<string, WorkId> = {};
      ids.success = await pool.enqueueAction(ok, {}, { name: "welcome" });
      t.clock.advance(1);
      ids.failed = await pool.enqueueAction(bad, {});
      t.clock.advance(1);
      ids.retrying = await pool.enqueueAction(flaky, {}, { retry: { maxAttempts: 2, initialBackoffMs: 60_000, base: 1 } });
      t.clock.advance(1);
      ids.canceled = await pool.enqueueAction(ok, {}, { runAfter: 60_000 });
      await pool.runOnce();
      await pool.cancel(ids.canceled);
      t.clock.advance(1);
      ids.pending = await pool.enqueueAction(ok, {}, { runAfter: 60_000, name: "weekly", key: "tenant-1", priority: 5 });
      const elsewhere = t.pool({ name: "elsewhere" });
      await elsewhere.enqueueAction(
        elsewhere.defineAction("x", () => 1),
        {},
      );

      const list = async (options?: Parameters<typeof admin.list>[1]): Promise<string[]> =>
        (await admin.list("p", options)).items.map((i) => i.id);
      const newestFirst = [ids.pending, ids.canceled, ids.retrying, ids.failed, ids.success];
      expect(await list()).toEqual(newestFirst);
      expect(await list({ state: "pending" })).toEqual([ids.pending]);
      expect(await list({ state: "retrying" })).toEqual([ids.retrying]);
      expect(await list({ state: "running" })).toEqual([]);
      expect(await list({ state: "finished" })).toEqual([ids.canceled, ids.failed, ids.success]);
      expect(await list({ state: "success" })).toEqual([ids.success]);
      expect(await list({ state: "failed" })).toEqual([ids.failed]);
      expect(await list({ state: "canceled" })).toEqual([ids.canceled]);
      expect(await list({ handler: "send.email" })).toEqual([ids.pending, ids.canceled, ids.success]);
      expect(await list({ handler: "send.email", state: "finished" })).toEqual([ids.canceled, ids.success]);
      expect(await list({ search: "send." })).toEqual([ids.pending, ids.canceled, ids.success]);
      expect(await list({ search: "wee" })).toEqual([ids.pending]);
      expect(await list({ search: ids.failed })).toEqual([ids.failed]);
      expect(await list({ search: "nothing" })).toEqual([]);
      expect(await list({ key: "tenant-1" })).toEqual([ids.pending]);
      expect(await list({ key: "tenant-1", state: "finished" })).toEqual([]);
      expect(await list({ key: "k" })).toEqual([]);
      expect((await admin.list("p", { key: "tenant-1" })).items[0]).toMatchObject({ priority: 5, key: "tenant-1", name: "weekly" });
      expect((await admin.get(ids.pending))!).toMatchObject({ priority: 5, key: "tenant-1" });
      expect(await list({ state: "failed", search: "bad" })).toEqual([ids.failed]);

      const page = await admin.list("p", { state: "failed" });
      expect(page).toEqual({
        items: [
          {
            id: ids.failed,
            pool: "p",
            kind: "action",
            handler: "bad",
            name: null,
            state: "finished",
            resultKind: "failed",
            attempts: 1,
            priority: 0,
            key: null,
            runAt: T0 + 1,
            enqueuedAt: T0 + 1,
            startedAt: T0 + 3,
            finishedAt: T0 + 3,
          },
        ],
        cursor: null,
      });
      expect(await admin.list("no-such-pool")).toEqual({ items: [], cursor: null });
    });

    test("get() shows one work in full, with the error, name and stack of each failed attempt, the last 10 kept", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const pool = t.pool({ name: "p" });
      const done = pool.defineOnComplete("done", () => undefined);
      let calls = 0;
      const flaky = pool.defineAction("flaky", (_c, args: { to: string }) => {
        calls++;
        if (calls === 3) throw `plain text ${args.to}`;
        if (calls < 13) throw new TypeError(`boom ${calls}`);
        return { sent: args.to };
      });
      const retry = { maxAttempts: 20, initialBackoffMs: 10, base: 1 };
      const id = await pool.enqueueAction(flaky, { to: "a@b.c" }, { retry, onComplete: done, context: { user: 7 }, timeoutMs: 5000 });
      for (let i = 0; i < 13; i++) {
        await pool.runOnce();
        t.clock.advance(20);
      }
      const w = (await admin.get(id))!;
      expect(w).toMatchObject({
        id,
        pool: "p",
        kind: "action",
        handler: "flaky",
        name: null,
        state: "finished",
        resultKind: "success",
        attempts: 13,
        args: { to: "a@b.c" },
        context: { user: 7 },
        retry,
        timeoutMs: 5000,
        result: { kind: "success", returnValue: { sent: "a@b.c" } },
        onComplete: { handler: "done", state: "done", failedAttempts: 0, error: null },
        priority: 0,
        key: null,
      });
      expect(w.attemptHistory.map((a) => [a.attempt, a.outcome])).toEqual([
        [4, "retrying"],
        [5, "retrying"],
        [6, "retrying"],
        [7, "retrying"],
        [8, "retrying"],
        [9, "retrying"],
        [10, "retrying"],
        [11, "retrying"],
        [12, "retrying"],
        [13, "success"],
      ]);
      const fourth = w.attemptHistory[0]!;
      expect(fourth.error).toMatchObject({ message: "boom 4", name: "TypeError" });
      expect(fourth.error!.stack).toContain("TypeError: boom 4");
      expect(fourth.endedAt).toBeGreaterThanOrEqual(fourth.startedAt!);
      expect(w.attemptHistory[9]).toEqual({ attempt: 13, startedAt: w.startedAt, endedAt: w.finishedAt, outcome: "success" });
      expect(await admin.get("00000000000000000000000000")).toBeNull();
    });

    test("get() gives a failure's errorData, typed, and no retriedAs before a retry", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const pool = t.pool({ name: "p" });
      const charge = pool.defineAction("charge", () => {
        throw new WorkError("card declined", { code: "declined", retryIn: [1, 2] });
      });
      const plain = pool.defineAction("plain", () => {
        throw new Error("oops");
      });
      const [declined, oops] = [await pool.enqueueAction(charge, {}), await pool.enqueueAction(plain, {})];
      await pool.runOnce();
      const result = (await admin.get(declined))!.result;
      // Narrowed to the failed result, whose type has errorData.
      if (result?.kind !== "failed") throw new Error(`expected a failed result, got ${JSON.stringify(result)}`);
      expect(result.errorData).toEqual({ code: "declined", retryIn: [1, 2] });
      expect((await admin.get(oops))!).toMatchObject({ result: { kind: "failed", error: "oops" }, retriedAs: null });
      expect((await admin.get(oops))!.result).not.toHaveProperty("errorData");
    });

    test("get() keeps a thrown non-Error's text, a final failure, and a lost worker's attempt", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const pool = t.pool({ name: "p", leaseMs: 1000 });
      const handle = pool.defineAction("lost", () => 1);
      const textId = await pool.enqueueAction(
        pool.defineAction("t2", () => Promise.reject("just text")),
        {},
      );
      await pool.runOnce();
      expect((await admin.get(textId))!.attemptHistory).toEqual([
        { attempt: 1, startedAt: T0, endedAt: T0, outcome: "failed", error: { message: "just text" } },
      ]);
      // An attempt claimed by a worker that then disappears: rescued as lost, run again.
      const lostId = await pool.enqueueAction(handle, {}, { retry: { maxAttempts: 2, initialBackoffMs: 0, base: 1 } });
      await t.driver.claim("p", { workerId: "gone", clock: () => t.clock.now(), leaseMs: 1000, limit: 10 });
      t.clock.advance(1001);
      expect((await pool.runOnce()).rescued).toBe(1);
      await pool.runOnce();
      const lost = (await admin.get(lostId))!;
      expect(lost.attemptHistory.map((a) => a.outcome)).toEqual(["lost", "success"]);
      expect(lost.attemptHistory[0]!.error!.message).toMatch(/^worker lost: attempt 1/);
    });
  });
}
