/**
 * Guarantee 6: cancel of pending work (also work waiting to retry) and of running work;
 * cancelAll.
 */
import { describe, expect, test } from "vitest";
import { toWorkId } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { aborted, deferred, nextEvent, useTestContext } from "./context.js";

export function defineCancelTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("cancel", () => {
    const ctx = useTestContext(harness);

    test("pending work finishes canceled at once and never runs", async () => {
      const t = await ctx();
      const pool = t.pool();
      let ran = false;
      const a = pool.defineAction("a", () => {
        ran = true;
      });
      const id = await pool.enqueueAction(a, {}, { runAfter: 1000 });
      await pool.cancel(id);
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "canceled" } });
      t.clock.advance(2000);
      expect((await pool.runOnce()).claimed).toBe(0);
      expect(ran).toBe(false);
    });

    test("work waiting to retry finishes canceled", async () => {
      const t = await ctx();
      const pool = t.pool();
      const f = pool.defineAction("f", () => {
        throw new Error("x");
      });
      const id = await pool.enqueueAction(f, {}, { retry: true });
      await pool.runOnce();
      expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 1 });
      await pool.cancel(id);
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "canceled" } });
    });

    test("running work gets its signal aborted, finishes canceled and is never retried", async () => {
      const t = await ctx();
      const pool = t.pool();
      let calls = 0;
      const slow = pool.defineAction("slow", async (c) => {
        calls++;
        await aborted(c.signal);
        throw new Error("aborted by signal");
      });
      const id = await pool.enqueueAction(slow, {}, { retry: true });
      const started = nextEvent(pool, "started");
      const step = pool.runOnce();
      await started;
      await pool.cancel(id);
      await step;
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "canceled" } });
      t.clock.advance(3_600_000);
      await pool.runOnce();
      expect(calls).toBe(1);
    });

    test("a cancel from another process reaches the running attempt through its heartbeat", async () => {
      const t = await ctx();
      const worker = t.pool({ leaseMs: 3000 });
      const other = t.pool();
      const reasons: unknown[] = [];
      const slow = worker.defineAction("slow", async (c) => {
        reasons.push(await aborted(c.signal));
        return "ignored";
      });
      const id = await worker.enqueueAction(slow, {});
      const started = nextEvent(worker, "started");
      const step = worker.runOnce();
      await started;
      await other.cancel(id);
      expect(await other.status(id)).toEqual({ state: "running", previousAttempts: 0 });
      t.clock.advance(1000); // heartbeat interval = leaseMs / 3
      await step;
      expect(reasons).toHaveLength(1);
      expect(await other.status(id)).toEqual({ state: "finished", result: { kind: "canceled" } });
    });

    test("a cancel that arrives while an action runs wins over the outcome it returns", async () => {
      const t = await ctx();
      const worker = t.pool();
      const other = t.pool();
      const gates = [deferred(), deferred()];
      const calls: number[] = [];
      // Ignores its signal: the outcome reaches the store after the cancel request did.
      const stubborn = worker.defineAction("stubborn", async (_c, n: number) => {
        calls.push(n);
        await gates[n]!.promise;
        if (n === 1) throw new Error("failed after the cancel");
        return "done anyway";
      });
      const ids = await worker.enqueueActionBatch(stubborn, [0, 1], { retry: true });
      const completed: { workId: string; status: string }[] = [];
      worker.on("completed", (e) => completed.push({ workId: e.workId, status: e.status }));
      const started = ids.map((id) => nextEvent(worker, "started", (e) => e.workId === id));
      const step = worker.runOnce();
      await Promise.all(started);
      expect(await other.cancelAll()).toBe(2);
      for (const g of gates) g.resolve();
      await step;
      for (const id of ids) expect(await other.status(id)).toEqual({ state: "finished", result: { kind: "canceled" } });
      expect(completed.sort((a, b) => a.workId.localeCompare(b.workId))).toEqual(
        ids.map((workId) => ({ workId, status: "canceled" })).sort((a, b) => a.workId.localeCompare(b.workId)),
      );
      // The failed one is not retried.
      t.clock.advance(3_600_000);
      expect((await worker.runOnce()).claimed).toBe(0);
      expect(calls.sort()).toEqual([0, 1]);
    });

    test("cancelAll cancels everything enqueued before the call, not what comes after", async () => {
      const t = await ctx();
      const pool = t.pool();
      const a = pool.defineAction("a", () => 1);
      const ids = await pool.enqueueActionBatch(a, [1, 2, 3], { runAfter: 10 });
      const old = await pool.enqueueAction(a, {}, { runAfter: 10 });
      t.clock.advance(1);
      expect(await pool.cancelAll({ before: t.clock.now() })).toBe(4);
      const fresh = await pool.enqueueAction(a, {});
      expect((await pool.statusBatch([...ids, old])).every((s) => s.state === "finished" && s.result?.kind === "canceled")).toBe(true);
      expect(await pool.status(fresh)).toEqual({ state: "pending", previousAttempts: 0 });
      expect(await pool.cancelAll()).toBe(1);
      expect(await pool.cancelAll()).toBe(0);
    });

    test("calls nested two deep inside a transaction do not wait for each other (a mutation cancels work whose onComplete cancels more)", async () => {
      const t = await ctx();
      const pool = t.pool();
      const noop = pool.defineAction("noop", () => undefined);
      const chain = pool.defineOnComplete<{ next: string }>("chain", async (_c, { context }) => {
        await pool.cancel(toWorkId(context.next));
      });
      const first = pool.defineMutation("first", async (_c, ids: { a: string }) => {
        await pool.cancel(toWorkId(ids.a));
      });
      const second = await pool.enqueueAction(noop, {}, { runAfter: 60_000 });
      const a = await pool.enqueueAction(noop, {}, { runAfter: 60_000, onComplete: chain, context: { next: second } });
      await pool.enqueueMutation(first, { a });
      await pool.runOnce();
      expect(await pool.status(a)).toMatchObject({ state: "finished", result: { kind: "canceled" } });
      expect(await pool.status(second)).toMatchObject({ state: "finished", result: { kind: "canceled" } });
    });

    test("canceling finished work changes nothing", async () => {
      const t = await ctx();
      const pool = t.pool();
      const a = pool.defineAction("a", () => "v");
      const id = await pool.enqueueAction(a, {});
      await pool.runOnce();
      await pool.cancel(id);
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: "v" } });
    });
  });
}
