/**
 * Guarantee 14, acting: the admin API cancels, retries, purges, pauses and resumes with no
 * handler loaded, through the pool's own transitions. Work the admin finishes keeps its
 * onComplete for a worker of the pool (a process with the handler), which delivers it
 * exactly once.
 */
import { describe, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import { InvalidArgumentError, UnknownWorkError, type OnCompleteArgs, type Workpool } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { aborted, deferred, nextEvent, useTestContext, type TestContext } from "./context.js";

/** A worker process's pool: the handlers, and an onComplete that records each delivery in the app's table. */
async function workerPool<Tx>(harness: StoreHarness<Tx>, t: TestContext<Tx>, options = {}) {
  await harness.createAppTable(t.h);
  const pool = t.pool({ name: "jobs", ...options });
  const seen: OnCompleteArgs[] = [];
  const record = pool.defineOnComplete("record", (c, args) => {
    seen.push(args);
    harness.insertAppRow(c.tx, args.workId);
  });
  let failing = true;
  const job = pool.defineAction("job", (_c, args: { n: number }) => {
    if (failing) throw new Error(`job ${args.n} failed`);
    return args.n;
  });
  return { pool, seen, record, job, succeed: () => (failing = false) };
}

/** Steps the worker a few times, with time passing, so every due delivery has had its chance. */
async function drive<Tx>(t: TestContext<Tx>, pool: Workpool<Tx>, steps = 3): Promise<void> {
  for (let i = 0; i < steps; i++) {
    await pool.runOnce();
    t.clock.advance(1000);
  }
}

export function defineAdminActionTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("admin: acting", () => {
    const ctx = useTestContext(harness);

    test("cancel() of pending work: a worker of the pool delivers its onComplete, exactly once", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const w = await workerPool(harness, t);
      const id = await w.pool.enqueueAction(w.job, { n: 1 }, { runAfter: 60_000, onComplete: w.record, context: { c: 1 } });
      expect(await admin.cancel(id)).toBe(true);
      expect(await admin.cancel(id)).toBe(false);
      // Finished by the admin, which has no handler: the delivery waits for a worker.
      expect((await admin.get(id))!.onComplete).toEqual({ handler: "record", state: "pending", failedAttempts: 0, error: null });
      await drive(t, w.pool);
      t.clock.advance(120_000);
      await drive(t, w.pool);
      expect(w.seen).toEqual([{ workId: id, context: { c: 1 }, result: { kind: "canceled" } }]);
      expect(await harness.countAppRows(t.h)).toBe(1);
      expect((await admin.get(id))!.onComplete).toMatchObject({ state: "done" });
      expect(await admin.cancel("00000000000000000000000000")).toBe(false);
    });

    test("an admin on its own store (another process) cancels, purges and retries; the worker delivers each onComplete once", async () => {
      const t = await ctx();
      const elsewhere = await harness.secondStore(t.h);
      try {
        const admin = workpoolAdmin(elsewhere, { clock: t.clock });
        const w = await workerPool(harness, t);
        await w.pool.runOnce();
        const options = { runAfter: 60_000, onComplete: w.record };
        const [canceled, purged] = await w.pool.enqueueActionBatch(w.job, [{ n: 1 }, { n: 2 }], options);
        const failed = await w.pool.enqueueAction(w.job, { n: 3 }, { onComplete: w.record });
        await w.pool.runOnce();
        expect(await admin.cancel(canceled!)).toBe(true);
        expect(await admin.purge("jobs", { state: "pending" })).toBe(1);
        w.succeed();
        const retried = await admin.retry(failed);
        await drive(t, w.pool, 5);
        t.clock.advance(120_000);
        await drive(t, w.pool, 5);
        expect(w.seen.map((s) => `${s.workId}:${s.result.kind}`).sort()).toEqual(
          [`${canceled}:canceled`, `${purged}:canceled`, `${failed}:failed`, `${retried}:success`].sort(),
        );
        expect(await harness.countAppRows(t.h)).toBe(4);
      } finally {
        await elsewhere.close();
      }
    });

    test("cancel() of running work aborts the attempt through its heartbeat; it finishes canceled, never retried", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const pool = t.pool({ name: "jobs", leaseMs: 3000 });
      let calls = 0;
      const slow = pool.defineAction("slow", async (c) => {
        calls++;
        await aborted(c.signal);
        throw new Error("stopped");
      });
      const id = await pool.enqueueAction(slow, {}, { retry: true });
      const started = nextEvent(pool, "started");
      const step = pool.runOnce();
      await started;
      expect(await admin.cancel(id)).toBe(true);
      t.clock.advance(1000); // the heartbeat: leaseMs / 3
      await step;
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "canceled" } });
      await drive(t, pool);
      expect(calls).toBe(1);
      const history = (await admin.get(id))!.attemptHistory;
      expect(history).toMatchObject([{ attempt: 1, outcome: "canceled" }]);
      expect(history[0]!.error).toBeUndefined();
    });

    test("cancelAll() cancels a pool's unfinished work enqueued before a time, of one handler or key if asked", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const w = await workerPool(harness, t);
      const other = w.pool.defineAction("other", () => 1);
      const early = await w.pool.enqueueActionBatch(w.job, [{ n: 1 }, { n: 2 }], { runAfter: 60_000 });
      const otherId = await w.pool.enqueueAction(other, {}, { runAfter: 60_000 });
      t.clock.advance(10);
      const late = await w.pool.enqueueAction(w.job, { n: 3 }, { runAfter: 60_000, key: "k" });
      expect(await admin.cancelAll("jobs", { handler: "job", before: t.clock.now() })).toBe(2);
      for (const id of early) expect((await admin.get(id))!.resultKind).toBe("canceled");
      expect((await admin.get(late))!.state).toBe("pending");
      expect((await admin.get(otherId))!.state).toBe("pending");
      expect(await admin.cancelAll("jobs", { key: "other-key" })).toBe(0);
      expect(await admin.cancelAll("jobs", { key: "k" })).toBe(1);
      expect((await admin.get(late))!.resultKind).toBe("canceled");
      expect((await admin.get(otherId))!.state).toBe("pending");
      expect(await admin.cancelAll("jobs")).toBe(1);
      expect((await admin.pools())[0]!.counts).toMatchObject({ pending: 0, canceled: 4 });
    });

    test("retry() runs failed or canceled work again as new work; each work's onComplete runs exactly once", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const w = await workerPool(harness, t);
      const id = await w.pool.enqueueAction(w.job, { n: 5 }, { onComplete: w.record, context: { c: 5 }, name: "five", timeoutMs: 9000 });
      await w.pool.runOnce();
      expect((await admin.get(id))!.resultKind).toBe("failed");
      w.succeed();
      const again = await admin.retry(id);
      expect(again).not.toBe(id);
      await drive(t, w.pool);
      const [before, after] = [(await admin.get(id))!, (await admin.get(again))!];
      expect(before).toMatchObject({ state: "finished", resultKind: "failed", attempts: 1 });
      expect(after).toMatchObject({
        handler: "job",
        name: "five",
        args: { n: 5 },
        context: { c: 5 },
        retry: null,
        timeoutMs: 9000,
        result: { kind: "success", returnValue: 5 },
        onComplete: { handler: "record", state: "done" },
        attempts: 1,
      });
      expect(w.seen.map((s) => [s.workId, s.result.kind])).toEqual([
        [id, "failed"],
        [again, "success"],
      ]);
      expect(await harness.countAppRows(t.h)).toBe(2);
      // A canceled work may be retried too; successful, pending and unknown work may not.
      const canceled = await w.pool.enqueueAction(w.job, { n: 6 }, { runAfter: 60_000 });
      await admin.cancel(canceled);
      const third = await admin.retry(canceled);
      await expect(admin.retry(again)).rejects.toThrow(InvalidArgumentError);
      await expect(admin.retry(again)).rejects.toThrow(/finished with success/);
      const pending = await w.pool.enqueueAction(w.job, { n: 7 }, { runAfter: 60_000 });
      await expect(admin.retry(pending)).rejects.toThrow(/is pending; only finished work that failed or was canceled/);
      await expect(admin.retry("00000000000000000000000000")).rejects.toThrow(UnknownWorkError);
      await drive(t, w.pool);
      expect((await admin.get(third))!.resultKind).toBe("success");
    });

    test("retry() of a work it already retried is refused, naming the new work; get() shows it as retriedAs", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const w = await workerPool(harness, t);
      const id = await w.pool.enqueueAction(w.job, { n: 1 });
      await w.pool.runOnce();
      expect((await admin.get(id))!.retriedAs).toBeNull();
      const again = await admin.retry(id);
      expect((await admin.get(id))!.retriedAs).toBe(again);
      expect((await admin.get(again))!.retriedAs).toBeNull();
      const second = admin.retry(id);
      await expect(second).rejects.toThrow(InvalidArgumentError);
      await expect(second).rejects.toThrow(`work ${id} was already retried as ${again}`);
      expect(await harness.countWorkRows(t.h)).toBe(2);
      // The new work, once it fails, may be retried in turn.
      await w.pool.runOnce();
      const third = await admin.retry(again);
      expect((await admin.get(again))!.retriedAs).toBe(third);
    });

    test("concurrent retries of one work, from one store or two, make one new work", async () => {
      const t = await ctx();
      const elsewhere = await harness.secondStore(t.h);
      try {
        const admins = [workpoolAdmin(t.h.store, { clock: t.clock }), workpoolAdmin(elsewhere, { clock: t.clock })];
        const w = await workerPool(harness, t);
        const ids = await w.pool.enqueueActionBatch(w.job, [{ n: 1 }, { n: 2 }]);
        await w.pool.runOnce();
        for (const id of ids) {
          // Four at once. One store serves its calls in order, so both of its calls read the work unretried before either writes.
          const results = await Promise.allSettled([
            admins[0]!.retry(id),
            admins[0]!.retry(id),
            admins[1]!.retry(id),
            admins[1]!.retry(id),
          ]);
          const made = results.filter((r) => r.status === "fulfilled").map((r) => r.value);
          expect(made).toHaveLength(1);
          for (const r of results) {
            if (r.status === "rejected") expect(String(r.reason)).toContain(`work ${id} was already retried as ${made[0]}`);
          }
          expect((await admins[1]!.get(id))!.retriedAs).toBe(made[0]);
        }
        expect(await harness.countWorkRows(t.h)).toBe(4);
      } finally {
        await elsewhere.close();
      }
    });

    test("purge() of finished work deletes it before a time, never while its onComplete is still to run", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const w = await workerPool(harness, t);
      w.succeed();
      const old = await w.pool.enqueueActionBatch(w.job, [{ n: 1 }, { n: 2 }]);
      await w.pool.runOnce();
      t.clock.advance(60_000);
      const recent = await w.pool.enqueueAction(w.job, { n: 4 });
      await w.pool.runOnce();
      const awaiting = await w.pool.enqueueAction(w.job, { n: 3 }, { runAfter: 1, onComplete: w.record });
      await admin.cancel(awaiting); // finished, its onComplete pending for the worker
      expect(await admin.purge("jobs", { state: "finished", before: t.clock.now() - 1000 })).toBe(2);
      for (const id of old) expect(await admin.get(id)).toBeNull();
      expect(await admin.purge("jobs", { state: "finished" })).toBe(1);
      expect(await admin.get(recent)).toBeNull();
      expect((await admin.get(awaiting))!.onComplete!.state).toBe("pending");
      await drive(t, w.pool);
      expect(w.seen.map((s) => s.workId)).toEqual([awaiting]);
      expect(await admin.purge("jobs", { state: "finished" })).toBe(1);
      expect(await harness.countWorkRows(t.h)).toBe(0);
    });

    test("purge() of pending work cancels it through the normal path: onComplete runs exactly once, running work is left", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const w = await workerPool(harness, t);
      const plain = await w.pool.enqueueActionBatch(w.job, [{ n: 1 }, { n: 2 }, { n: 3 }], { runAfter: 60_000 });
      const withHandler = await w.pool.enqueueAction(w.job, { n: 4 }, { runAfter: 60_000, onComplete: w.record });
      const release = deferred();
      const held = w.pool.defineAction("held", () => release.promise);
      const running = await w.pool.enqueueAction(held, {});
      const started = nextEvent(w.pool, "started");
      const step = w.pool.runOnce();
      await started;
      expect(await admin.purge("jobs", { state: "pending" })).toBe(4);
      for (const id of plain) expect(await admin.get(id)).toBeNull();
      expect((await admin.get(withHandler))!.result).toEqual({ kind: "canceled" });
      expect((await admin.get(running))!.state).toBe("running");
      release.resolve();
      await step;
      await drive(t, w.pool);
      expect(w.seen).toEqual([{ workId: withHandler, context: undefined, result: { kind: "canceled" } }]);
      expect(await harness.countAppRows(t.h)).toBe(1);
      expect((await admin.get(running))!.resultKind).toBe("success");
    });

    test("pause() holds the pool at 0, resume() restores the limit; a worker's own limit waits for the resume", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const pool = t.pool({ name: "jobs", maxParallelism: 3 });
      const ok = pool.defineAction("ok", () => 1);
      await pool.runOnce();
      await pool.enqueueActionBatch(ok, [1, 2]);
      await admin.pause("jobs");
      await admin.pause("jobs");
      expect((await admin.pools())[0]).toMatchObject({ maxParallelism: 0, pausedFrom: 3 });
      expect((await pool.runOnce()).claimed).toBe(0);
      // A worker that starts, or configure(), while the pool is paused sets the limit the resume restores.
      const restarted = t.pool({ name: "jobs", maxParallelism: 5 });
      await restarted.runOnce();
      expect((await admin.pools())[0]).toMatchObject({ maxParallelism: 0, pausedFrom: 5 });
      await admin.resume("jobs");
      expect((await admin.pools())[0]).toMatchObject({ maxParallelism: 5, pausedFrom: null });
      await admin.resume("jobs");
      expect((await pool.runOnce()).claimed).toBe(2);
      await admin.pause("jobs");
      await admin.setParallelism("jobs", 2);
      expect((await admin.pools())[0]).toMatchObject({ maxParallelism: 2, pausedFrom: null });
      await expect(admin.pause("no-such-pool")).rejects.toMatchObject({ field: "pool" });
      // A pool that has work but no stored configuration yet gets the default one.
      const fresh = t.pool({ name: "fresh" });
      await fresh.enqueueAction(
        fresh.defineAction("x", () => 1),
        {},
      );
      await admin.pause("fresh");
      expect((await admin.pools()).find((p) => p.name === "fresh")).toMatchObject({ maxParallelism: 0, pausedFrom: 10 });
    });
  });
}
