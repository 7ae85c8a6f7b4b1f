/**
 * No handler, thrown value or refused write can jam a pool: whatever a handler throws is
 * stored as a readable failure, a write the store refuses is isolated and recorded in a
 * simpler form, and a logger that throws fails nothing. Backoff here uses real (seeded)
 * jitter, so scheduled times are not round numbers.
 */
import { describe, expect, test } from "vitest";
import type { TxOps } from "../../src/driver/driver.js";
import type { Store } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { seededRandom, useTestContext, withDriver, type DriverOverrides, type TestContext } from "./context.js";

/** Lets timers' callbacks, I/O and promise chains run. */
async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}

/**
 * Awaits `promise` while moving the test's clock on `stepMs` at a time, for backoffs that
 * wait on it. Between steps it waits a millisecond of real time, so database round trips
 * finish however loaded the machine is. Gives up after ten minutes of clock time.
 */
async function whileAdvancing<T, Tx>(t: TestContext<Tx>, promise: Promise<T>, stepMs = 100): Promise<T> {
  let done = false;
  const tracked = promise.finally(() => (done = true));
  for (let i = 0; i < 6000 && !done; i++) {
    await new Promise((r) => setTimeout(r, 1));
    if (!done) t.clock.advance(stepMs);
  }
  return tracked;
}

/** A null-prototype object whose only property throws when read: String() and JSON both fail on it. */
function unreadable(): object {
  const o = Object.create(null) as object;
  Object.defineProperty(o, "x", {
    enumerable: true,
    get() {
      throw new Error("getter");
    },
  });
  return o;
}

/** An Error whose `message` getter throws. */
function errorWithBadMessage(): Error {
  const e = new Error("hidden");
  Object.defineProperty(e, "message", {
    get() {
      throw new Error("no message");
    },
  });
  return e;
}

/** Text the fault-injected store refuses to hold anywhere in a write. */
const POISON = "poison-for-the-store";

function refusedText(value: unknown): boolean {
  return typeof value === "string" && value.includes(POISON);
}

/** TxOps whose writes refuse poisoned text, as a store would refuse a value it cannot hold. */
function refusingOps<Tx>(ops: TxOps<Tx>): TxOps<Tx> {
  const refuse = (): Promise<never> => Promise.reject(new Error("the store refuses this value"));
  return new Proxy(ops, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (key === "finish")
        return (rows: { result: string }[]) => (rows.some((r) => refusedText(r.result)) ? refuse() : target.finish(rows as never));
      if (key === "updateOnComplete")
        return (rows: { ocError: string | null }[]) =>
          rows.some((r) => refusedText(r.ocError)) ? refuse() : target.updateOnComplete(rows as never);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The test's store, refusing any write that carries the poison text. */
function refusingStore<Tx>(t: TestContext<Tx>): Store<Tx> {
  const overrides: DriverOverrides<Tx> = {
    transaction: (real, fn) => real.transaction((ops) => fn(refusingOps(ops))),
  };
  const complete = t.driver.complete;
  if (complete) {
    overrides.complete = (real, pool, writes, now, claim) =>
      writes.some((w) => refusedText(w.result))
        ? Promise.reject(new Error("the store refuses this value"))
        : complete.call(real, pool, writes, now, claim);
  }
  return withDriver(t.h.store, overrides);
}

export function defineJamProofTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("nothing jams a pool", () => {
    const ctx = useTestContext(harness);

    test("an onComplete that keeps throwing is tried maxAttempts times and holds back no other result", async () => {
      const t = await ctx();
      const pool = t.pool({
        maxParallelism: 20,
        random: seededRandom(7),
        defaultRetryBehavior: { maxAttempts: 3, initialBackoffMs: 100, base: 2 },
      });
      let calls = 0;
      const bad = pool.defineOnComplete("bad", () => {
        calls++;
        throw new Error("always");
      });
      const ok = pool.defineAction("ok", (_c, n: number) => n);
      const poisoned = await pool.enqueueAction(ok, 0, { onComplete: bad });
      const plain = await pool.enqueueActionBatch(ok, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      await pool.runOnce();
      expect(calls).toBe(1);
      for (const id of plain) expect(await pool.status(id)).toMatchObject({ state: "finished", result: { kind: "success" } });
      for (let i = 0; i < 5; i++) {
        t.clock.advance(10_000);
        await pool.runOnce();
      }
      expect(calls).toBe(3);
      expect(await pool.status(poisoned)).toMatchObject({
        state: "finished",
        onComplete: { state: "failed", failedAttempts: 3, error: "always" },
      });
      // Canceling pending work whose onComplete throws finishes it at once.
      const later = await pool.enqueueAction(ok, 5, { onComplete: bad, runAfter: 60_000 });
      expect(await pool.cancel(later)).toBe(true);
      expect(await pool.status(later)).toMatchObject({
        state: "finished",
        result: { kind: "canceled" },
        onComplete: { state: "pending", failedAttempts: 1 },
      });
    });

    test("whatever a handler throws is stored as readable text, and the work finishes", async () => {
      const t = await ctx();
      const pool = t.pool({
        maxParallelism: 50,
        random: seededRandom(11),
        defaultRetryBehavior: { maxAttempts: 2, initialBackoffMs: 50, base: 2 },
      });
      const throwers: Record<string, () => unknown> = {
        nullProto: unreadable,
        badMessage: errorWithBadMessage,
        nul: () => new Error("bad\u0000byte"),
        nulString: () => "a\u0000b",
        symbol: () => Symbol("s"),
        undefined: () => undefined,
      };
      let mutationRuns = 0;
      const act = pool.defineAction("act", (_c, which: string) => {
        throw throwers[which]!();
      });
      const mut = pool.defineMutation("mut", (_c, which: string) => {
        mutationRuns++;
        throw throwers[which]!();
      });
      const oc = pool.defineOnComplete("oc", (_c, { context }) => {
        throw throwers[context as string]!();
      });
      const returnsUnreadable = pool.defineAction("returnsUnreadable", () => unreadable());
      const ok = pool.defineAction("ok", () => "fine");
      const which = Object.keys(throwers);
      const actions = await Promise.all(which.map((w) => pool.enqueueAction(act, w)));
      const mutations = await Promise.all(which.map((w) => pool.enqueueMutation(mut, w)));
      const withOc = await Promise.all(which.map((w) => pool.enqueueAction(ok, null, { onComplete: oc, context: w })));
      const returned = await pool.enqueueAction(returnsUnreadable, {});
      const plain = await pool.enqueueActionBatch(ok, new Array(10).fill(null));
      await pool.runOnce();
      await pool.runOnce();
      const expected = [
        "unprintable thrown value (object)",
        "Error (its message could not be read)",
        "badbyte",
        "ab",
        "Symbol(s)",
        "undefined",
      ];
      for (const [i, id] of [...actions, ...mutations].entries()) {
        expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "failed", error: expected[i % which.length] } });
      }
      expect(mutationRuns).toBe(which.length);
      for (const [i, id] of withOc.entries()) {
        expect(await pool.status(id)).toMatchObject({
          state: "finished",
          onComplete: { state: "pending", failedAttempts: 1, error: expected[i] },
        });
      }
      expect(await pool.status(returned)).toMatchObject({
        state: "finished",
        result: { kind: "failed", error: expect.stringContaining("getter") },
      });
      for (const id of plain) expect(await pool.status(id)).toMatchObject({ state: "finished", result: { kind: "success" } });
      t.clock.advance(60_000);
      await pool.runOnce();
      for (const id of withOc) expect(await pool.status(id)).toMatchObject({ onComplete: { state: "failed", failedAttempts: 2 } });
    });

    test("a result the store refuses is isolated and recorded as a failure; the rest of its batch is written", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 50, random: seededRandom(3) }, refusingStore(t));
      const echo = pool.defineAction("echo", (_c, text: string) => text);
      const texts = Array.from({ length: 20 }, (_, i) => (i === 13 ? POISON : `fine ${i}`));
      const ids = await pool.enqueueActionBatch(echo, texts);
      await whileAdvancing(t, pool.runOnce());
      for (const [i, id] of ids.entries()) {
        const status = await pool.status(id);
        if (i === 13) {
          expect(status).toMatchObject({ state: "finished", result: { kind: "failed" } });
          const error = (status as { result: { error: string } }).result.error;
          expect(error).toMatch(/could not record the outcome of attempt 1: the store refused it \(the store refuses this value\)/);
        } else {
          expect(status).toEqual({ state: "finished", result: { kind: "success", returnValue: texts[i] } });
        }
      }
      expect(t.logger.matching("writing it in halves").length).toBeGreaterThan(0);
    });

    test("an onComplete whose record the store refuses is marked failed; the work keeps its result", async () => {
      const t = await ctx();
      const pool = t.pool(
        { random: seededRandom(5), defaultRetryBehavior: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } },
        refusingStore(t),
      );
      let calls = 0;
      const oc = pool.defineOnComplete("oc", () => {
        calls++;
        throw new Error(POISON);
      });
      const ok = pool.defineAction("ok", () => "fine");
      const id = await pool.enqueueAction(ok, {}, { onComplete: oc });
      const other = await pool.enqueueAction(ok, {});
      await whileAdvancing(t, pool.runOnce());
      const status = await pool.status(id);
      expect(status).toMatchObject({
        state: "finished",
        result: { kind: "success", returnValue: "fine" },
        onComplete: { state: "failed" },
      });
      expect((status as { onComplete: { error: string } }).onComplete.error).toMatch(/the store refused it/);
      expect(calls).toBeGreaterThan(0);
      expect(await pool.status(other)).toMatchObject({ state: "finished", result: { kind: "success" } });
    });

    test("a mutation whose transaction the store refuses runs once and is recorded as failed", async () => {
      const t = await ctx();
      const pool = t.pool({}, refusingStore(t));
      let runs = 0;
      const mut = pool.defineMutation("mut", () => {
        runs++;
        return POISON;
      });
      const id = await pool.enqueueMutation(mut, {});
      await pool.runOnce();
      expect(runs).toBe(1);
      expect(await pool.status(id)).toMatchObject({
        state: "finished",
        result: { kind: "failed", error: expect.stringMatching(/could not record the outcome of attempt 1/) },
      });
    });

    test("a rescue the store refuses holds back no other rescue, and ends in a recorded failure", async () => {
      const t = await ctx();
      let refusedId = "";
      const store = withDriver(t.h.store, {
        transaction: (real, fn) =>
          real.transaction((ops) =>
            fn(
              new Proxy(ops, {
                get(target, key, receiver) {
                  const value: unknown = Reflect.get(target, key, receiver);
                  if (key === "finish") {
                    return (rows: { id: string; result: string }[]) =>
                      rows.some((r) => r.id === refusedId && !r.result.includes("could not record"))
                        ? Promise.reject(new Error("the store refuses this row"))
                        : target.finish(rows as never);
                  }
                  return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
                },
              }),
            ),
          ),
      });
      const pool = t.pool({ leaseMs: 1000 }, store);
      const job = pool.defineAction("job", (_c, _n: number) => "done");
      await pool.runOnce();
      const ids = await pool.enqueueActionBatch(job, [1, 2, 3]);
      refusedId = ids[1]!;
      // A worker that claims them and dies without a word: they are found by their leases.
      const now = t.clock.now();
      await t.driver.claim(pool.name, { workerId: "dead-worker", clock: () => now, leaseMs: 1000, limit: 3 });
      t.clock.advance(5000);
      for (let i = 0; i < 12; i++) {
        await pool.runOnce();
        t.clock.advance(1000);
      }
      for (const id of ids) {
        const status = await pool.status(id);
        if (id === refusedId)
          expect(status).toMatchObject({
            state: "finished",
            result: { kind: "failed", error: expect.stringMatching(/the store refused it/) },
          });
        else expect(status).toMatchObject({ state: "finished", result: { kind: "failed", error: expect.stringMatching(/worker lost/) } });
      }
    });

    test("a logger that throws fails no operation and stops no worker", async () => {
      const t = await ctx();
      const warnings: string[] = [];
      const onWarning = (w: Error): void => void warnings.push(w.message);
      process.on("warning", onWarning);
      try {
        const throwing = { debug: boom, info: boom, warn: boom, error: boom };
        const pool = t.pool({ logger: throwing, logLevel: "DEBUG" });
        const seen: string[] = [];
        pool.on("completed", (e) => seen.push(e.status));
        const fail = pool.defineAction("fail", () => {
          throw new Error("expected");
        });
        const ok = pool.defineAction("ok", () => 1);
        const a = await pool.enqueueAction(ok, {});
        const b = await pool.enqueueAction(fail, {});
        await pool.runOnce();
        expect(await pool.status(a)).toMatchObject({ state: "finished", result: { kind: "success" } });
        expect(await pool.status(b)).toMatchObject({ state: "finished", result: { kind: "failed", error: "expected" } });
        expect(seen.sort()).toEqual(["failed", "success"]);
        await settle();
        expect(warnings.filter((w) => w.includes("the logger's"))).toHaveLength(1);
      } finally {
        process.off("warning", onWarning);
      }
    });

    test("a random source that returns NaN is reported, and the retry still gets a sane time", async () => {
      const t = await ctx();
      const pool = t.pool({ random: () => NaN });
      const fail = pool.defineAction("fail", () => {
        throw new Error("try again");
      });
      const id = await pool.enqueueAction(fail, {}, { retry: { maxAttempts: 2, initialBackoffMs: 1000, base: 2 } });
      await pool.runOnce();
      expect(t.logger.matching("random: returned NaN").length).toBeGreaterThan(0);
      expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 1 });
      t.clock.advance(1500);
      await pool.runOnce();
      expect(await pool.status(id)).toMatchObject({ state: "finished", result: { kind: "failed" } });
    });
  });
}

function boom(): never {
  throw new Error("the logger is broken");
}
