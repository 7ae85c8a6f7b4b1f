/**
 * Guarantee 7 and timeouts: attempts whose worker stopped heart-beating are rescued after
 * leaseMs ("worker lost"), late results of lost attempts are ignored, heartbeats keep long
 * attempts alive, and timeouts abort the signal. stop() is in stop.ts.
 */
import { describe, expect, test } from "vitest";
import { ManualClock } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { aborted, deferred, nextEvent, T0, useTestContext } from "./context.js";

export function defineRecoveryTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("recovery and timeouts", () => {
    const ctx = useTestContext(harness);

    test("a lost worker's attempt is retried after leaseMs, and its late result is ignored", async () => {
      const t = await ctx();
      // The "dead" worker has its own clock that never moves, so it never heart-beats.
      const frozen = new ManualClock(T0);
      const dead = t.pool({ leaseMs: 10_000, clock: frozen });
      const live = t.pool({ leaseMs: 10_000 });
      const release = deferred<string>();
      const job = dead.defineAction("job", () => release.promise);
      live.defineAction("job", (c) => `rescued on attempt ${c.attempt}`);
      const id = await dead.enqueueAction(job, {}, { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } });
      const started = nextEvent(dead, "started");
      const deadStep = dead.runOnce();
      await started;
      t.clock.advance(9_999);
      expect((await live.runOnce()).rescued).toBe(0);
      t.clock.advance(2);
      const r = await live.runOnce();
      expect(r.rescued).toBe(1);
      expect(await live.status(id)).toEqual({ state: "pending", previousAttempts: 1 });
      t.clock.advance(100);
      await live.runOnce();
      expect(await live.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: "rescued on attempt 2" } });
      release.resolve("late result");
      await deadStep;
      expect(await live.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: "rescued on attempt 2" } });
      expect(t.logger.matching("no longer current").length).toBeGreaterThan(0);
    });

    test("a lost attempt without retry fails with 'worker lost'", async () => {
      const t = await ctx();
      const frozen = new ManualClock(T0);
      const dead = t.pool({ leaseMs: 1000, clock: frozen });
      const live = t.pool({ leaseMs: 1000 });
      const never = deferred();
      const job = dead.defineAction("job", () => never.promise);
      const id = await dead.enqueueAction(job, {});
      const started = nextEvent(dead, "started");
      void dead.runOnce();
      await started;
      // The dead worker was also the maintenance leader: rescue waits for its leadership to lapse too.
      t.clock.advance(10_000);
      expect((await live.runOnce()).rescued).toBe(1);
      const s = await live.status(id);
      expect(s.state === "finished" && s.result?.kind === "failed" && s.result.error).toMatch(/^worker lost/);
      never.resolve();
    });

    test("heartbeats keep a long attempt's lease alive", async () => {
      const t = await ctx();
      const pool = t.pool({ leaseMs: 3000 });
      const other = t.pool({ leaseMs: 3000 });
      const gate = deferred();
      const job = pool.defineAction("job", () => gate.promise.then(() => "done"));
      const id = await pool.enqueueAction(job, {});
      const started = nextEvent(pool, "started");
      const step = pool.runOnce();
      await started;
      const leaseEnd = async () => (await t.driver.readWork(pool.name, [id]))[0]!.leaseUntil!;
      for (let i = 0; i < 10; i++) {
        t.clock.advance(1000); // the heartbeat interval: leaseMs / 3
        // Wait (bounded) for the heartbeat this step fired to land: a renewed lease ends a full leaseMs from now.
        for (let n = 0; n < 2000 && (await leaseEnd()) < t.clock.now() + 3000; n++) await new Promise((r) => setTimeout(r, 1));
        expect(await leaseEnd()).toBe(t.clock.now() + 3000);
      }
      expect((await other.runOnce()).rescued).toBe(0);
      gate.resolve();
      await step;
      expect(await pool.status(id)).toMatchObject({ state: "finished", result: { kind: "success" } });
    });

    test("timeoutMs aborts the signal and fails the attempt saying it timed out", async () => {
      const t = await ctx();
      const pool = t.pool();
      const reasons: unknown[] = [];
      const hang = pool.defineAction("hang", async (c) => {
        reasons.push(await aborted(c.signal));
        return "too late";
      });
      const id = await pool.enqueueAction(hang, {}, { timeoutMs: 500, retry: { maxAttempts: 2, initialBackoffMs: 0, base: 1 } });
      const started = nextEvent(pool, "started");
      const step = pool.runOnce();
      await started;
      t.clock.advance(500);
      await step;
      expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 1 });
      expect((reasons[0] as Error).name).toBe("TimeoutError");
      const again = nextEvent(pool, "started");
      const step2 = pool.runOnce();
      await again;
      t.clock.advance(500);
      await step2;
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "failed", error: "timed out after 500 ms" } });
    });

    test("actionTimeoutMs applies to every action of the pool", async () => {
      const t = await ctx();
      const pool = t.pool({ actionTimeoutMs: 200 });
      const hang = pool.defineAction("hang", () => new Promise(() => undefined));
      const id = await pool.enqueueAction(hang, {});
      const started = nextEvent(pool, "started");
      const step = pool.runOnce();
      await started;
      t.clock.advance(200);
      await step;
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "failed", error: "timed out after 200 ms" } });
    });

    test("a started pool runs work enqueued later and scheduled work when its time comes", async () => {
      const t = await ctx();
      const pool = t.pool();
      const a = pool.defineAction("a", (_c, n: number) => n);
      await pool.start();
      const done1 = nextEvent(pool, "completed");
      const id1 = await pool.enqueueAction(a, 1);
      expect((await done1).workId).toBe(id1);
      const id2 = await pool.enqueueAction(a, 2, { runAfter: 30_000 });
      const done2 = nextEvent(pool, "completed");
      // Polls and the next-run timer fire as the clock moves.
      for (let i = 0; i < 400 && (await pool.status(id2)).state !== "finished"; i++) {
        t.clock.advance(100);
        await new Promise((r) => setImmediate(r));
      }
      expect((await done2).workId).toBe(id2);
      await pool.stop();
    });
  });
}
