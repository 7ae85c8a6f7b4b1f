/**
 * Guarantee 7 and timeouts: attempts whose worker stopped heart-beating are rescued after
 * leaseMs ("worker lost"), late results of lost attempts are ignored, timeouts abort the
 * signal, and stop() hands running attempts back without counting them.
 */
import { describe, expect, test } from "vitest";
import { ManualClock, type Store, type WorkId } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { aborted, deferred, nextEvent, T0, useTestContext, withDriver, type DriverOverrides, type TestContext } from "./context.js";

/** The test's store, with a switch that makes writes, transactions and heartbeats fail as in an outage. */
function outageStore<Tx>(t: TestContext<Tx>): { store: Store<Tx>; down: { on: boolean } } {
  const down = { on: false };
  const message = "simulated outage: the store does not answer";
  const outage = (): Promise<never> => Promise.reject(new Error(message));
  const overrides: DriverOverrides<Tx> = {
    transaction: (real, fn) => (down.on ? outage() : real.transaction(fn)),
    heartbeat: (real, ...args) => (down.on ? outage() : real.heartbeat(...args)),
    // The store is unreachable, as a lost connection would say.
    isTransientError: (real, e) => (e instanceof Error && e.message === message) || real.isTransientError(e),
  };
  const complete = t.driver.complete;
  if (complete) overrides.complete = (real, ...args) => (down.on ? outage() : complete.apply(real, args));
  return { store: withDriver(t.h.store, overrides), down };
}

/** Lets timers' callbacks, I/O and promise chains run. */
async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}

/** Moves the test's clock on 1 s at a time, letting callbacks run, until `done()` or 30 s passed. */
async function advanceUntil<Tx>(t: TestContext<Tx>, done: () => boolean): Promise<void> {
  for (let i = 0; i < 30 && !done(); i++) {
    t.clock.advance(1000);
    await settle();
  }
}

/**
 * With the store answering again: once the lease of `id`'s attempt has lapsed, another
 * instance rescues it, runs it again as `fnName` and finishes it with `returnValue`.
 */
async function expectRescuedAndFinished<Tx>(t: TestContext<Tx>, id: WorkId, fnName: string, returnValue: string): Promise<void> {
  const live = t.pool({ leaseMs: 10_000 });
  live.defineAction(fnName, () => returnValue);
  t.clock.advance(10_001);
  expect((await live.runOnce()).rescued).toBe(1);
  t.clock.advance(100);
  await live.runOnce();
  expect(await live.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue } });
}

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

    test("stop() waits, then aborts and hands running attempts back without counting an attempt", async () => {
      const t = await ctx();
      const pool = t.pool();
      const reasons: unknown[] = [];
      const hang = pool.defineAction("hang", async (c) => {
        reasons.push(await aborted(c.signal));
        throw new Error("aborted");
      });
      const id = await pool.enqueueAction(hang, {}, { retry: true });
      const started = nextEvent(pool, "started");
      await pool.start();
      await started;
      const stopping = pool.stop({ timeoutMs: 5000 });
      await new Promise((r) => setImmediate(r));
      expect(reasons).toHaveLength(0);
      t.clock.advance(5000);
      await stopping;
      expect(reasons).toHaveLength(1);
      expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 0 });
      expect(pool.running).toBe(0);
    });

    test("stop() never hands back an attempt whose result is already queued (it would run twice)", async () => {
      const t = await ctx();
      const pool = t.pool();
      const gate = deferred();
      let runs = 0;
      const job = pool.defineAction("job", async () => {
        runs++;
        await gate.promise;
        return "once";
      });
      const id = await pool.enqueueAction(job, {});
      const started = nextEvent(pool, "started");
      await pool.start();
      await started;
      gate.resolve();
      // Microtasks only: the outcome reaches the completer, whose write waits for a macrotask.
      for (let i = 0; i < 50; i++) await Promise.resolve();
      await pool.stop({ timeoutMs: 0 });
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: "once" } });
      expect((await pool.runOnce()).claimed).toBe(0);
      expect(runs).toBe(1);
    });

    test("stop() waits for a maintenance tick in flight, so it cannot take leadership back after stopping", async () => {
      const t = await ctx();
      const entered = deferred();
      const gate = deferred();
      const store = withDriver(t.h.store, {
        acquireLeadership: async (real, ...args) => {
          entered.resolve();
          await gate.promise;
          return real.acquireLeadership(...args);
        },
      });
      const pool = t.pool({}, store);
      await pool.start();
      t.clock.advance(0);
      await entered.promise;
      let stopped = false;
      const stopping = pool.stop().then(() => (stopped = true));
      await settle(20);
      expect(stopped).toBe(false);
      gate.resolve();
      await stopping;
      // The stopped pool gave leadership up: another instance takes it at once.
      expect((await t.pool().runOnce()).leader).toBe(true);
      expect(t.logger.matching("maintenance of pool")).toEqual([]);
    });

    test("stop() ends while a claim does not answer; rows that claim takes afterwards go back to the queue unstarted", async () => {
      const t = await ctx();
      const entered = deferred();
      const gate = deferred();
      let gateOpen = false;
      const released = deferred();
      const store = withDriver(t.h.store, {
        claim: async (real, ...args) => {
          entered.resolve();
          await gate.promise;
          return real.claim(...args);
        },
        // After the gate opens, the only transaction is the hand-back of the late claim.
        transaction: (real, fn) => real.transaction(fn).finally(() => gateOpen && released.resolve()),
      });
      const pool = t.pool({ leaseMs: 10_000 }, store);
      let runs = 0;
      const job = pool.defineAction("job", () => {
        runs++;
        return "ran";
      });
      const id = await pool.enqueueAction(job, {});
      await pool.start();
      await entered.promise;
      let stopped = false;
      const stopping = pool.stop({ timeoutMs: 0 }).then(() => (stopped = true));
      await settle();
      expect(stopped).toBe(false);
      await advanceUntil(t, () => stopped);
      expect(stopped).toBe(true);
      await stopping;
      expect(t.logger.matching("stop gave up waiting for a claim")).toHaveLength(1);
      // The claim now reaches the store and takes the row for the stopped worker, which
      // hands it straight back.
      gateOpen = true;
      gate.resolve();
      await released.promise;
      expect(pool.running).toBe(0);
      expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 0 });
      const other = t.pool();
      other.defineAction("job", () => "ran elsewhere");
      expect((await other.runOnce()).claimed).toBe(1);
      expect(await other.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: "ran elsewhere" } });
      expect(runs).toBe(0);
    });

    test("stop() ends while a maintenance tick does not answer, after leaseMs", async () => {
      const t = await ctx();
      const entered = deferred();
      const store = withDriver(t.h.store, {
        acquireLeadership: async () => {
          entered.resolve();
          return new Promise<never>(() => undefined);
        },
      });
      const pool = t.pool({ leaseMs: 10_000 }, store);
      await pool.start();
      t.clock.advance(0);
      await entered.promise;
      let stopped = false;
      const stopping = pool.stop().then(() => (stopped = true));
      t.clock.advance(9_999);
      await settle();
      expect(stopped).toBe(false);
      t.clock.advance(1);
      await stopping;
      expect(t.logger.matching("stop gave up waiting for a claim, enqueue or maintenance call")).toHaveLength(1);
    });

    test("stop() ends while the store does not answer: unwritten results are given up after leaseMs and the attempt is rescued", async () => {
      const t = await ctx();
      const { store, down } = outageStore(t);
      const pool = t.pool({ leaseMs: 10_000 }, store);
      const gate = deferred();
      let runs = 0;
      const job = pool.defineAction("job", async () => {
        runs++;
        await gate.promise;
        return "first run";
      });
      const id = await pool.enqueueAction(job, {}, { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } });
      const started = nextEvent(pool, "started");
      await pool.start();
      await started;
      down.on = true;
      gate.resolve();
      let stopped = false;
      const stopping = pool.stop({ timeoutMs: 0 }).then(() => (stopped = true));
      await advanceUntil(t, () => stopped);
      expect(stopped).toBe(true);
      await stopping;
      expect(t.logger.matching("stop gave up writing 1 result(s)")).toHaveLength(1);
      expect(pool.running).toBe(0);
      down.on = false;
      await expectRescuedAndFinished(t, id, "job", "second run");
      expect(runs).toBe(1);
    });

    test("stop() ends when handing back fails; the handed-back attempt is rescued after its lease", async () => {
      const t = await ctx();
      const { store, down } = outageStore(t);
      const pool = t.pool({ leaseMs: 10_000 }, store);
      const hang = pool.defineAction("hang", async (c) => {
        await aborted(c.signal);
        throw new Error("aborted");
      });
      const id = await pool.enqueueAction(hang, {}, { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } });
      const started = nextEvent(pool, "started");
      await pool.start();
      await started;
      down.on = true;
      await pool.stop({ timeoutMs: 0 });
      expect(t.logger.matching("stop could not hand back")).toHaveLength(1);
      expect(await pool.status(id)).toEqual({ state: "running", previousAttempts: 0 });
      down.on = false;
      await expectRescuedAndFinished(t, id, "hang", "rescued");
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
