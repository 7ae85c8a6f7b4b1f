/**
 * Enqueue (plain, batch, transactional) and running actions and mutations: the
 * pending -> running -> finished path and guarantees 1, 3 and 8.
 */
import { describe, expect, test } from "vitest";
import { toWorkId, UnknownWorkError, type WorkId } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { deferred, nextEvent, useTestContext } from "./context.js";

export function defineEnqueueRunTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("enqueue and run", () => {
    const ctx = useTestContext(harness);

    test("an action goes pending -> running -> finished with its return value", async () => {
      const t = await ctx();
      const pool = t.pool();
      const gate = deferred();
      const send = pool.defineAction("send", async (c, args: { to: string }) => {
        await gate.promise;
        return { sent: args.to, attempt: c.attempt, name: c.name };
      });
      const id = await pool.enqueueAction(send, { to: "a@b.c" });
      expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 0 });
      const started = nextEvent(pool, "started");
      const step = pool.runOnce();
      await started;
      expect(await pool.status(id)).toEqual({ state: "running", previousAttempts: 0 });
      gate.resolve();
      expect((await step).claimed).toBe(1);
      expect(await pool.status(id)).toEqual({
        state: "finished",
        result: { kind: "success", returnValue: { sent: "a@b.c", attempt: 1, name: "send" } },
      });
    });

    test("ctx.name is the enqueue name when given", async () => {
      const t = await ctx();
      const pool = t.pool();
      const seen: string[] = [];
      const a = pool.defineAction("a", (c) => {
        seen.push(c.name);
      });
      await pool.enqueueAction(a, {}, { name: "welcome-email" });
      await pool.runOnce();
      expect(seen).toEqual(["welcome-email"]);
    });

    test("a batch enqueue returns one id per args, in order, and all run", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 50 });
      const echo = pool.defineAction("echo", (_c, n: number) => n * 2);
      const ids = await pool.enqueueActionBatch(echo, [1, 2, 3, 4, 5]);
      expect(ids).toHaveLength(5);
      expect(new Set(ids).size).toBe(5);
      await pool.runOnce();
      const statuses = await pool.statusBatch(ids);
      expect(statuses.map((s) => (s.state === "finished" && s.result?.kind === "success" ? s.result.returnValue : null))).toEqual([
        2, 4, 6, 8, 10,
      ]);
      expect(await pool.enqueueActionBatch(echo, [])).toEqual([]);
    });

    test("a mutation's writes and its state change commit together", async () => {
      const t = await ctx();
      await harness.createAppTable(t.h);
      const pool = t.pool();
      const write = pool.defineMutation("write", (c, args: { k: string }) => {
        harness.insertAppRow(c.tx, args.k);
        return "ok";
      });
      const id = await pool.enqueueMutation(write, { k: "one" });
      await pool.runOnce();
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: "ok" } });
      expect(await harness.countAppRows(t.h)).toBe(1);
    });

    test("a throwing mutation rolls back its writes, fails, and is not retried", async () => {
      const t = await ctx();
      await harness.createAppTable(t.h);
      const pool = t.pool();
      let calls = 0;
      const bad = pool.defineMutation("bad", (c, args: { k: string }) => {
        calls++;
        harness.insertAppRow(c.tx, args.k);
        throw new Error("constraint broken");
      });
      const id = await pool.enqueueMutation(bad, { k: "x" });
      await pool.runOnce();
      t.clock.advance(60_000);
      await pool.runOnce();
      expect(calls).toBe(1);
      expect(await harness.countAppRows(t.h)).toBe(0);
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "failed", error: "constraint broken" } });
    });

    test("enqueue with { tx }: the work exists only if the caller's transaction commits", async () => {
      const t = await ctx();
      const pool = t.pool();
      const a = pool.defineAction("a", () => "done");
      let kept = "" as WorkId;
      let dropped = "" as WorkId;
      await harness.inAppTransaction(t.h, (tx) => pool.enqueueAction(a, {}, { tx }).then((id) => (kept = id)), false);
      await harness.inAppTransaction(t.h, (tx) => pool.enqueueAction(a, {}, { tx }).then((id) => (dropped = id)), true);
      expect(kept).toMatch(/^[0-9A-Z]{26}$/);
      expect(dropped).toMatch(/^[0-9A-Z]{26}$/);
      expect(await pool.status(kept)).toEqual({ state: "pending", previousAttempts: 0 });
      await expect(pool.status(dropped)).rejects.toBeInstanceOf(UnknownWorkError);
      expect((await pool.runOnce()).claimed).toBe(1);
      expect((await t.driver.counts(pool.name, t.clock.now())).pending).toBe(0);
    });

    test("a batch enqueue with { tx } rolls back as a whole", async () => {
      const t = await ctx();
      const pool = t.pool();
      const a = pool.defineAction("a", () => null);
      await harness.inAppTransaction(t.h, (tx) => pool.enqueueActionBatch(a, [1, 2, 3], { tx }), true);
      expect((await t.driver.counts(pool.name, t.clock.now())).pending).toBe(0);
    });

    test("a mutation can enqueue more work in its own transaction (tx: ctx.tx)", async () => {
      const t = await ctx();
      const pool = t.pool();
      const child = pool.defineAction("child", () => "child ran");
      let childId = "" as WorkId;
      const parent = pool.defineMutation("parent", async (c, fail: boolean) => {
        childId = await pool.enqueueAction(child, {}, { tx: c.tx });
        if (fail) throw new Error("parent failed");
      });
      await pool.enqueueMutation(parent, true);
      await pool.runOnce();
      await expect(pool.status(childId)).rejects.toBeInstanceOf(UnknownWorkError);
      await pool.enqueueMutation(parent, false);
      await pool.runOnce();
      expect(await pool.status(childId)).toEqual({ state: "pending", previousAttempts: 0 });
      await pool.runOnce();
      expect(await pool.status(childId)).toMatchObject({ state: "finished", result: { kind: "success", returnValue: "child ran" } });
    });

    test("a mutation can call the pool's API (status, cancel, enqueue without tx) without deadlock", async () => {
      const t = await ctx();
      const pool = t.pool();
      const a = pool.defineAction("a", () => 1);
      const victim = await pool.enqueueAction(a, {}, { runAfter: 60_000 });
      let spawned = "" as WorkId;
      const m = pool.defineMutation("m", async () => {
        const before = await pool.status(victim);
        await pool.cancel(victim);
        spawned = await pool.enqueueAction(a, {});
        return before.state;
      });
      const id = await pool.enqueueMutation(m, {});
      await pool.runOnce();
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: "pending" } });
      expect(await pool.status(victim)).toEqual({ state: "finished", result: { kind: "canceled" } });
      expect((await pool.status(spawned)).state).not.toBe("finished");
    });

    test("work a mutation enqueues and then rolls back never runs, though the mutation awaited after enqueuing it", async () => {
      const t = await ctx();
      const pool = t.pool();
      const ran: string[] = [];
      const child = pool.defineAction("child", () => void ran.push("child"));
      const parent = pool.defineMutation("parent", async () => {
        // Joins the mutation's transaction; the wake-up it sends must not claim inside it.
        await pool.enqueueAction(child, {});
        await new Promise((r) => setImmediate(r));
        await new Promise((r) => setImmediate(r));
        throw new Error("rolled back");
      });
      await pool.start();
      const done = nextEvent(pool, "completed", (e) => e.fnName === "parent");
      await pool.enqueueMutation(parent, {});
      expect((await done).status).toBe("failed");
      await pool.stop();
      expect(ran).toEqual([]);
      expect(await harness.countWorkRows(t.h)).toBe(1);
    });

    test("work scheduled with runAfter / runAt waits for its time", async () => {
      const t = await ctx();
      const pool = t.pool();
      const a = pool.defineAction("a", () => 1);
      const later = await pool.enqueueAction(a, {}, { runAfter: 5000 });
      const at = await pool.enqueueAction(a, {}, { runAt: t.clock.now() + 10_000 });
      expect((await pool.runOnce()).claimed).toBe(0);
      t.clock.advance(5000);
      expect((await pool.runOnce()).claimed).toBe(1);
      expect((await pool.status(later)).state).toBe("finished");
      expect((await pool.status(at)).state).toBe("pending");
      t.clock.advance(5000);
      expect((await pool.runOnce()).claimed).toBe(1);
    });

    test("work runs in run_at order", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 1 });
      const order: number[] = [];
      const a = pool.defineAction("a", (_c, n: number) => {
        order.push(n);
      });
      await pool.enqueueAction(a, 3, { runAfter: 30 });
      await pool.enqueueAction(a, 1, { runAfter: 10 });
      await pool.enqueueAction(a, 2, { runAfter: 20 });
      t.clock.advance(100);
      for (let i = 0; i < 3; i++) await pool.runOnce();
      expect(order).toEqual([1, 2, 3]);
    });

    test("an action whose handler is not defined in the claiming worker fails, naming it; the worker goes on", async () => {
      const t = await ctx();
      const producer = t.pool();
      const ghost = producer.defineAction("ghost", () => "never");
      const real = producer.defineAction("real", () => "ran");
      const worker = t.pool();
      worker.defineAction("real", () => "ran");
      const g = await producer.enqueueAction(ghost, {}, { retry: true });
      const r = await producer.enqueueAction(real, {});
      await worker.runOnce();
      const gs = await worker.status(g);
      expect(gs.state).toBe("finished");
      expect(gs.state === "finished" && gs.result?.kind === "failed" && gs.result.error).toContain('"ghost"');
      expect(await worker.status(r)).toMatchObject({ state: "finished", result: { kind: "success", returnValue: "ran" } });
    });

    test("a non-JSON return value fails the attempt with a clear message", async () => {
      const t = await ctx();
      const pool = t.pool();
      const a = pool.defineAction("a", () => new Map() as unknown);
      const id = await pool.enqueueAction(a, {});
      await pool.runOnce();
      const s = await pool.status(id);
      expect(s.state === "finished" && s.result?.kind === "failed" && s.result.error).toMatch(/returnValue.*Map/);
    });

    test("status of a well-formed id that never existed is an UnknownWorkError; malformed ids are rejected", async () => {
      const t = await ctx();
      const pool = t.pool();
      await expect(pool.status(toWorkId("0".repeat(26).replace(/^0{10}/, "ZZZZZZZZZZ")))).rejects.toBeInstanceOf(UnknownWorkError);
      // @ts-expect-error a plain string is not a WorkId; checked at run time too
      await expect(pool.status("nope")).rejects.toThrow(/id: is not a work id/);
      // @ts-expect-error a plain string is not a WorkId; checked at run time too
      await expect(pool.statusBatch(["nope"])).rejects.toThrow(/ids\[0\]/);
    });
  });
}
