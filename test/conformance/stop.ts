/**
 * stop(): it waits for running attempts, then aborts and hands them back without counting
 * an attempt, never hands back an attempt whose result is queued, and ends even while the
 * store does not answer (what it could not write is rescued after leaseMs).
 */
import { describe, expect, test } from "vitest";
import type { Store, WorkId } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { aborted, deferred, nextEvent, useTestContext, withDriver, type DriverOverrides, type TestContext } from "./context.js";

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

export function defineStopTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("stop", () => {
    const ctx = useTestContext(harness);

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
  });
}
