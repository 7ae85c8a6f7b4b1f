/**
 * The ActionRetrier suite: every store runs these same tests through its factory. Time is
 * a ManualClock and jitter is fixed, so every backoff is asserted to the millisecond;
 * work is stepped with runOnce() and running attempts are awaited through events.
 */
import { afterEach, describe, expect, test } from "vitest";
import { DRIVER } from "../../src/driver/driver.js";
import {
  ActionRetrier,
  InvalidArgumentError,
  ManualClock,
  NonRetryableError,
  RunNotCompletedError,
  WorkError,
  UnknownRunError,
  Workpool,
  type ActionRetrierOptions,
  type RetrierOnCompleteArgs,
  type RunId,
} from "../../src/index.js";
import { aborted, deferred, errorOf, CapturingLogger, nextEvent, T0, type RetrierStoreFactory, type RetrierTestStore } from "./helpers.js";

const DAY = 24 * 3600 * 1000;

interface Ctx<Tx> {
  s: RetrierTestStore<Tx>;
  clock: ManualClock;
  logger: CapturingLogger;
  /** A retrier on this test's store: ManualClock, jitter factor 1.0 (random 0.5), DEBUG logs. */
  retrier(options?: ActionRetrierOptions): ActionRetrier<Tx>;
  /** Pending + running work of the default retrier pool. */
  unfinished(): Promise<number>;
}

/** Registers the whole ActionRetrier suite for one store. */
export function defineActionRetrierSuite<Tx>(factory: RetrierStoreFactory<Tx>): void {
  describe(`ActionRetrier: ${factory.name}`, () => {
    const live: { s: RetrierTestStore<Tx>; retriers: ActionRetrier<Tx>[] }[] = [];
    afterEach(async () => {
      for (const l of live.splice(0)) {
        for (const r of l.retriers) await r.stop({ timeoutMs: 0 }).catch(() => undefined);
        await l.s.dispose();
      }
    });
    async function ctx(): Promise<Ctx<Tx>> {
      const s = await factory.create();
      const entry = { s, retriers: [] as ActionRetrier<Tx>[] };
      live.push(entry);
      const clock = new ManualClock(T0);
      const logger = new CapturingLogger();
      return {
        s,
        clock,
        logger,
        retrier(options) {
          const r = new ActionRetrier(s.store, { clock, logger, random: () => 0.5, logLevel: "DEBUG", ...options });
          entry.retriers.push(r);
          return r;
        },
        async unfinished() {
          const c = await s.store[DRIVER].counts("action-retrier", clock.now());
          return c.pending + c.running;
        },
      };
    }

    describe("runs and retries", () => {
      test("a successful run completes with its return value; the action sees runId and attempt", async () => {
        const t = await ctx();
        const r = t.retrier();
        const seen: unknown[] = [];
        const add = r.defineAction("add", (c, args: { a: number; b: number }) => {
          seen.push({ runId: c.runId, attempt: c.attempt, name: c.name, aborted: c.signal.aborted });
          return args.a + args.b;
        });
        const runId = await r.run(add, { a: 1, b: 2 });
        expect(typeof runId).toBe("string");
        expect(await r.status(runId)).toEqual({ type: "inProgress" });
        expect((await r.runOnce()).claimed).toBe(1);
        expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "success", returnValue: 3 } });
        expect(seen).toEqual([{ runId, attempt: 1, name: "add", aborted: false }]);
      });

      test("default backoff is 250 * 2^(numFailures+1) ms: retries after 500, 1000, 2000, 4000; then it fails with the last error", async () => {
        const t = await ctx();
        const r = t.retrier();
        expect(r.retryBehavior).toEqual({ maxAttempts: 5, initialBackoffMs: 500, base: 2 });
        const startedAt: number[] = [];
        const f = r.defineAction("f", (c) => {
          startedAt.push(t.clock.now() - T0);
          throw new Error(`fail #${c.attempt}`);
        });
        const runId = await r.run(f, {});
        await r.runOnce();
        for (let numFailures = 0; numFailures < 4; numFailures++) {
          const delay = 250 * 2 ** (numFailures + 1);
          expect(await r.status(runId)).toEqual({ type: "inProgress" });
          t.clock.advance(delay - 1);
          expect((await r.runOnce()).claimed, `retry ${numFailures + 1} not before ${delay} ms`).toBe(0);
          t.clock.advance(1);
          expect((await r.runOnce()).claimed, `retry ${numFailures + 1} at ${delay} ms`).toBe(1);
        }
        expect(startedAt).toEqual([0, 500, 1500, 3500, 7500]);
        expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "failed", error: "fail #5" } });
        t.clock.advance(DAY);
        expect((await r.runOnce()).claimed).toBe(0);
        expect(startedAt).toHaveLength(5);
      });

      test("custom initialBackoffMs, base and maxFailures, with jitter at its low end (x0.5)", async () => {
        const t = await ctx();
        const r = t.retrier({ initialBackoffMs: 100, base: 3, maxFailures: 2, random: () => 0 });
        const startedAt: number[] = [];
        const f = r.defineAction("f", (c) => {
          startedAt.push(t.clock.now() - T0);
          if (c.attempt < 3) throw new Error("not yet");
          return "third time";
        });
        const runId = await r.run(f, {});
        await r.runOnce();
        // 100 * 3^1 * 0.5 = 150, then 100 * 3^2 * 0.5 = 450.
        for (const delay of [150, 450]) {
          t.clock.advance(delay - 1);
          expect((await r.runOnce()).claimed).toBe(0);
          t.clock.advance(1);
          expect((await r.runOnce()).claimed).toBe(1);
        }
        expect(startedAt).toEqual([0, 150, 600]);
        expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "success", returnValue: "third time" } });
      });

      test("a run's own initialBackoffMs, base and maxFailures override the retrier's", async () => {
        const t = await ctx();
        const r = t.retrier({ initialBackoffMs: 1000, base: 2, maxFailures: 4, random: () => 0 });
        const startedAt: number[] = [];
        const f = r.defineAction("f", () => {
          startedAt.push(t.clock.now() - T0);
          throw new Error("always");
        });
        const runId = await r.run(f, {}, { initialBackoffMs: 10, base: 5, maxFailures: 2 });
        await r.runOnce();
        // 10 * 5^1 * 0.5 = 25, then 10 * 5^2 * 0.5 = 125; two failures retried, then it fails.
        for (const delay of [25, 125]) {
          t.clock.advance(delay - 1);
          expect((await r.runOnce()).claimed).toBe(0);
          t.clock.advance(1);
          expect((await r.runOnce()).claimed).toBe(1);
        }
        t.clock.advance(DAY);
        expect((await r.runOnce()).claimed).toBe(0);
        expect(startedAt).toEqual([0, 25, 150]);
        expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "failed", error: "always" } });
        // Only what a run gives is overridden: maxFailures alone keeps the retrier's backoff.
        const other = await r.runAfter(0, f, {}, { maxFailures: 0 });
        await r.runOnce();
        expect(await r.status(other)).toEqual({ type: "completed", result: { type: "failed", error: "always" } });
      });

      test("a run's own logLevel replaces the retrier's for that run's events", async () => {
        const t = await ctx();
        const r = t.retrier({ logLevel: "REPORT", maxFailures: 0 });
        const f = r.defineAction("f", () => {
          throw new Error("card declined");
        });
        const quiet = await r.run(f, {}, { logLevel: "ERROR" });
        const traced = await r.run(f, {}, { logLevel: "DEBUG" });
        const plain = await r.run(f, {});
        await r.runOnce();
        const logged = (id: string) =>
          t.logger.lines.filter((l) => l.fields.workId === id).map((l) => `${l.level} ${String(l.fields.event)}`);
        // A run that fails for good without an onComplete is a warning at the retrier's level.
        expect(logged(plain)).toEqual(["warn completed"]);
        expect(logged(quiet)).toEqual([]);
        expect(logged(traced)).toEqual(["info enqueued", "info started", "warn completed"]);
        const e = await errorOf(() => r.run(f, {}, { logLevel: "LOUD" as never }));
        expect((e as InvalidArgumentError).field).toBe("logLevel");
      });

      test("jitter at its high end stays below x1.5", async () => {
        const t = await ctx();
        const r = t.retrier({ initialBackoffMs: 1000, base: 2, maxFailures: 1, random: () => 0.999 });
        const f = r.defineAction("f", () => {
          throw new Error("x");
        });
        await r.run(f, {});
        await r.runOnce();
        // 1000 * 2^1 * 1.499 = 2998
        t.clock.advance(2997);
        expect((await r.runOnce()).claimed).toBe(0);
        t.clock.advance(1);
        expect((await r.runOnce()).claimed).toBe(1);
      });

      test("maxFailures 0 makes one attempt", async () => {
        const t = await ctx();
        const r = t.retrier({ maxFailures: 0 });
        let calls = 0;
        const f = r.defineAction("f", () => {
          calls++;
          throw new Error("only once");
        });
        const runId = await r.run(f, {});
        await r.runOnce();
        t.clock.advance(DAY);
        await r.runOnce();
        expect(calls).toBe(1);
        expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "failed", error: "only once" } });
      });

      test("NonRetryableError fails the run at once", async () => {
        const t = await ctx();
        const r = t.retrier();
        let calls = 0;
        const f = r.defineAction("f", () => {
          calls++;
          throw new NonRetryableError("card declined");
        });
        const runId = await r.run(f, {});
        await r.runOnce();
        t.clock.advance(DAY);
        await r.runOnce();
        expect(calls).toBe(1);
        expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "failed", error: "card declined" } });
      });

      test("there is no parallelism limit: many runs start in one step", async () => {
        const t = await ctx();
        const r = t.retrier();
        const gate = deferred();
        const wait = r.defineAction("wait", () => gate.promise);
        for (let i = 0; i < 25; i++) await r.run(wait, {});
        let started = 0;
        const all = new Promise<void>((resolve) => r.on("started", () => ++started === 25 && resolve()));
        const step = r.runOnce();
        await all;
        gate.resolve();
        expect((await step).claimed).toBe(25);
      });
    });

    describe("onComplete", () => {
      test("runs exactly once per run with { runId, result }, in a transaction, for success, failure and cancel", async () => {
        const t = await ctx();
        await t.s.createAppTable();
        const r = t.retrier({ maxFailures: 1 });
        const calls: { ctxRunId: string; name: string; args: RetrierOnCompleteArgs }[] = [];
        const done = r.defineOnComplete("done", async (c, args) => {
          calls.push({ ctxRunId: c.runId, name: c.name, args });
          await t.s.insertAppRow(c.tx, args.runId);
        });
        const ok = r.defineAction("ok", () => ({ id: 7 }));
        const bad = r.defineAction("bad", () => {
          throw new Error("nope");
        });
        const okId = await r.run(ok, {}, { onComplete: done });
        const badId = await r.run(bad, {}, { onComplete: done });
        const laterId = await r.runAfter(60_000, ok, {}, { onComplete: done });
        await r.runOnce();
        expect(await r.cancel(laterId)).toBe(true);
        t.clock.advance(1000);
        await r.runOnce();
        for (let i = 0; i < 3; i++) {
          t.clock.advance(DAY);
          await r.runOnce();
        }
        const byId = new Map(calls.map((c) => [c.args.runId, c]));
        expect(calls).toHaveLength(3);
        expect(byId.get(okId)).toEqual({
          ctxRunId: okId,
          name: "done",
          args: { runId: okId, result: { type: "success", returnValue: { id: 7 } } },
        });
        expect(byId.get(badId)!.args).toEqual({ runId: badId, result: { type: "failed", error: "nope" } });
        expect(byId.get(laterId)!.args).toEqual({ runId: laterId, result: { type: "canceled" } });
        expect(await t.s.appRows()).toEqual([okId, badId, laterId].sort());
      });

      test("receives the run's context and the error data of its last failure", async () => {
        const t = await ctx();
        const r = t.retrier({ maxFailures: 0 });
        const calls: RetrierOnCompleteArgs<unknown, { currency: string }>[] = [];
        const done = r.defineOnComplete<unknown, { currency: string }>("done", (_c, args) => void calls.push(args));
        const f = r.defineAction("f", () => {
          throw new WorkError("no rate", { status: 503 });
        });
        const runId = await r.run(f, {}, { onComplete: done, context: { currency: "EUR" } });
        await r.runOnce();
        await r.runOnce();
        const result = { type: "failed", error: "no rate", errorData: { status: 503 } } as const;
        expect(calls).toEqual([{ runId, context: { currency: "EUR" }, result }]);
        expect(await r.status(runId)).toEqual({ type: "completed", result });
      });

      test("an onComplete that throws rolls back and is delivered again; it commits once; cleanup waits for it", async () => {
        const t = await ctx();
        await t.s.createAppTable();
        const r = t.retrier();
        let tries = 0;
        const flaky = r.defineOnComplete("flaky", async (c, { runId }) => {
          tries++;
          await t.s.insertAppRow(c.tx, `${runId}#${tries}`);
          if (tries === 1) throw new Error("onComplete boom");
        });
        const ok = r.defineAction("ok", () => 1);
        const runId = await r.run(ok, {}, { onComplete: flaky });
        await r.runOnce();
        expect(tries).toBe(1);
        expect(await t.s.appRows()).toEqual([]);
        expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "success", returnValue: 1 } });
        const e = await errorOf(() => r.cleanup(runId));
        expect(e).toBeInstanceOf(RunNotCompletedError);
        expect((e as Error).message).toMatch(/onComplete handler has not committed yet/);
        // Redelivery uses the pool's default onComplete backoff: 250 ms at jitter 1.0.
        t.clock.advance(250);
        await r.runOnce();
        expect(tries).toBe(2);
        t.clock.advance(DAY);
        await r.runOnce();
        expect(tries).toBe(2);
        expect(await t.s.appRows()).toEqual([`${runId}#2`]);
        await r.cleanup(runId);
      });

      test("defineOnComplete and defineAction check their arguments", async () => {
        const t = await ctx();
        const r = t.retrier();
        r.defineAction("send", () => 1);
        expect(() => r.defineAction("send", () => 2)).toThrow(/"send" is already defined/);
        expect(() => r.defineOnComplete("send", () => undefined)).toThrow(InvalidArgumentError);
        expect(() => r.defineAction("x", "nope" as never)).toThrow(/defineAction\(handler\): must be a function/);
        expect(() => r.defineOnComplete("y", 5 as never)).toThrow(/defineOnComplete\(handler\): must be a function/);
        expect(() => r.defineAction("", () => 1)).toThrow(/defineAction\(name\)/);
      });
    });

    describe("cancel", () => {
      test("a run waiting to start completes canceled at once and never runs; cancel again is false", async () => {
        const t = await ctx();
        const r = t.retrier();
        let calls = 0;
        const a = r.defineAction("a", () => ++calls);
        const runId = await r.runAfter(10_000, a, {});
        expect(await r.cancel(runId)).toBe(true);
        expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "canceled" } });
        expect(await r.cancel(runId)).toBe(false);
        t.clock.advance(10_000);
        expect((await r.runOnce()).claimed).toBe(0);
        expect(calls).toBe(0);
      });

      test("a running attempt has its signal aborted, completes canceled and is not retried", async () => {
        const t = await ctx();
        const r = t.retrier();
        const reasons: unknown[] = [];
        const hang = r.defineAction("hang", async (c) => {
          reasons.push(await aborted(c.signal));
          throw new Error("aborted, would be retried if not canceled");
        });
        const runId = await r.run(hang, {});
        const started = nextEvent(r, "started");
        const step = r.runOnce();
        await started;
        expect(await r.cancel(runId)).toBe(true);
        // Already being canceled: this call cancels nothing.
        expect(await r.cancel(runId)).toBe(false);
        await step;
        expect(reasons).toHaveLength(1);
        expect((reasons[0] as Error).name).toBe("AbortError");
        expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "canceled" } });
        t.clock.advance(DAY);
        expect((await r.runOnce()).claimed).toBe(0);
        expect(reasons).toHaveLength(1);
      });

      test("a run waiting to retry completes canceled", async () => {
        const t = await ctx();
        const r = t.retrier();
        let calls = 0;
        const f = r.defineAction("f", () => {
          calls++;
          throw new Error("transient");
        });
        const runId = await r.run(f, {});
        await r.runOnce();
        expect(await r.status(runId)).toEqual({ type: "inProgress" });
        expect(await r.cancel(runId)).toBe(true);
        expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "canceled" } });
        t.clock.advance(DAY);
        await r.runOnce();
        expect(calls).toBe(1);
      });

      test("cancel of a completed run is false and changes nothing", async () => {
        const t = await ctx();
        const r = t.retrier();
        const a = r.defineAction("a", () => "done");
        const runId = await r.run(a, {});
        await r.runOnce();
        expect(await r.cancel(runId)).toBe(false);
        expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "success", returnValue: "done" } });
      });
    });

    describe("cleanup and retention", () => {
      test("cleanup deletes a completed run; afterwards the run is unknown", async () => {
        const t = await ctx();
        const r = t.retrier();
        const a = r.defineAction("a", () => 1);
        const runId = await r.run(a, {});
        await r.runOnce();
        await r.cleanup(runId);
        for (const call of [() => r.status(runId), () => r.cancel(runId), () => r.cleanup(runId)]) {
          const e = await errorOf(call);
          expect(e).toBeInstanceOf(UnknownRunError);
          expect((e as UnknownRunError).runId).toBe(runId);
          expect((e as Error).message).toMatch(/no run with id .* cleanup\(\)/);
        }
      });

      test("cleanup of a run in progress throws a clear error and deletes nothing", async () => {
        const t = await ctx();
        const r = t.retrier();
        const f = r.defineAction("f", () => {
          throw new Error("transient");
        });
        const waiting = await r.runAfter(1000, f, {});
        const retrying = await r.run(f, {});
        await r.runOnce();
        for (const runId of [waiting, retrying]) {
          const e = await errorOf(() => r.cleanup(runId));
          expect(e).toBeInstanceOf(RunNotCompletedError);
          expect((e as Error).message).toMatch(new RegExp(`run "${runId}" cannot be deleted: it is still in progress`));
          expect(await r.status(runId)).toEqual({ type: "inProgress" });
        }
      });

      test("completed runs are deleted 7 days after they complete", async () => {
        const t = await ctx();
        const r = t.retrier();
        const a = r.defineAction("a", () => 1);
        const runId = await r.run(a, {});
        await r.runOnce();
        t.clock.advance(7 * DAY);
        expect((await r.runOnce()).deleted).toBe(0);
        expect(await r.status(runId)).toMatchObject({ type: "completed" });
        t.clock.advance(1);
        expect((await r.runOnce()).deleted).toBe(1);
        expect(await errorOf(() => r.status(runId))).toBeInstanceOf(UnknownRunError);
      });

      test("malformed run ids are rejected naming runId", async () => {
        const t = await ctx();
        const r = t.retrier();
        for (const call of [() => r.status("nope" as RunId), () => r.cancel(42 as never), () => r.cleanup(undefined as never)]) {
          const e = await errorOf(call);
          expect(e).toBeInstanceOf(InvalidArgumentError);
          expect((e as Error).message).toMatch(/runId: is not a run id/);
        }
      });
    });

    describe("scheduling", () => {
      test("runAfter, runAt and run's { runAt, runAfter } delay the first attempt exactly", async () => {
        const t = await ctx();
        const r = t.retrier();
        const order: string[] = [];
        const a = r.defineAction("a", (_c, tag: string) => {
          order.push(`${tag}@${t.clock.now() - T0}`);
        });
        await r.runAfter(1000, a, "runAfter");
        await r.runAt(T0 + 2000, a, "runAt");
        await r.run(a, "run.runAfter", { runAfter: 3000 });
        await r.run(a, "run.runAt", { runAt: T0 + 4000 });
        await r.run(a, "now");
        for (const at of [0, 999, 1000, 1999, 2000, 2999, 3000, 3999, 4000]) {
          t.clock.set(T0 + at);
          await r.runOnce();
        }
        expect(order).toEqual(["now@0", "runAfter@1000", "runAt@2000", "run.runAfter@3000", "run.runAt@4000"]);
      });

      test("bad run input is rejected with the field's name and nothing is written", async () => {
        const t = await ctx();
        const r = t.retrier();
        const a = r.defineAction("a", (_c, _args: unknown) => 1);
        const done = r.defineOnComplete("done", () => undefined);
        const otherAction = new Workpool(t.s.store, { name: "other" }).defineAction("x", () => 1);
        const cases: [() => unknown, RegExp][] = [
          // @ts-expect-error runAt and runAfter are exclusive in the types too
          [() => r.run(a, {}, { runAt: T0, runAfter: 1 }), /runAt: give runAt .* not both/],
          [() => r.run(a, {}, { runAt: NaN }), /runAt: must be a finite number/],
          [() => r.runAfter(Infinity, a, {}), /runAfter: must be a finite number/],
          [() => r.runAt("soon" as never, a, {}), /runAt: must be a finite number/],
          [() => r.runAt(T0, a, {}, { runAfter: 5 } as never), /runAfter: is not an option of runAt\(\)/],
          [() => r.runAfter(5, a, {}, { runAt: T0 } as never), /runAt: is not an option of runAfter\(\)/],
          [() => r.run(a, {}, { retry: true } as never), /retry: is not an option of run\(\)/],
          [() => r.run(a, {}, { maxFailures: 1.5 }), /maxFailures: must be an integer/],
          [() => r.run(a, {}, { base: 0.5 }), /base: must be a finite number from 1 to 1000, got 0.5/],
          [() => r.run(a, {}, { initialBackoffMs: -1 }), /initialBackoffMs: must be a finite number from 0 to 86400000/],
          // @ts-expect-error context needs onComplete in the types too
          [() => r.run(a, {}, { context: { a: 1 } }), /context: is only delivered to onComplete/],
          [() => r.run(a, {}, { onComplete: done, context: { f: () => 1 } as never }), /context.f: a function is not JSON/],
          [() => r.run(a, {}, "fast" as never), /options: must be an object/],
          [() => r.run(a, { when: new Date() }), /args.when: a Date is not plain JSON/],
          [() => r.run(a, undefined), /args: undefined is not JSON/],
          [
            () => r.run(otherAction, {}),
            /handle: must be a handle returned by this pool's defineAction\(\) \(it belongs to pool "other"\)/,
          ],
          [() => r.run(done as never, {}), /handle:/],
          [() => r.run(a, {}, { onComplete: a as never }), /onComplete:/],
        ];
        for (const [call, message] of cases) {
          const e = await errorOf(call);
          expect(e, String(message)).toBeInstanceOf(InvalidArgumentError);
          expect((e as Error).message, String(message)).toMatch(message);
        }
        expect(await t.unfinished()).toBe(0);
      });

      test("with { tx } the run exists if and only if the caller's transaction commits", async () => {
        const t = await ctx();
        const r = t.retrier();
        const a = r.defineAction("a", (_c, n: number) => n * 2);
        let committed = "" as RunId;
        let rolledBack = "" as RunId;
        await t.s.inAppTransaction((tx) => r.run(a, 21, { tx }).then((id) => (committed = id)), false);
        await t.s.inAppTransaction((tx) => r.run(a, 1, { tx }).then((id) => (rolledBack = id)), true);
        expect(await errorOf(() => r.status(rolledBack))).toBeInstanceOf(UnknownRunError);
        await r.runOnce();
        expect(await r.status(committed)).toEqual({ type: "completed", result: { type: "success", returnValue: 42 } });
      });
    });

    describe("lost workers", () => {
      test("a run whose worker died is retried after leaseMs with the normal backoff; the late result is ignored", async () => {
        const t = await ctx();
        // The "dead" worker's clock never moves, so it never renews its lease.
        const frozen = new ManualClock(T0);
        const dead = t.retrier({ leaseMs: 10_000, clock: frozen });
        const alive = t.retrier({ leaseMs: 10_000 });
        const release = deferred<string>();
        const job = dead.defineAction("job", () => release.promise);
        alive.defineAction("job", (c) => `rescued on attempt ${c.attempt}`);
        const runId = await dead.run(job, {});
        const started = nextEvent(dead, "started");
        const deadStep = dead.runOnce();
        await started;
        t.clock.advance(9_999);
        expect((await alive.runOnce()).rescued).toBe(0);
        t.clock.advance(2);
        expect((await alive.runOnce()).rescued).toBe(1);
        expect(await alive.status(runId)).toEqual({ type: "inProgress" });
        // The lost attempt counts as the first failure: the retry waits 250 * 2^1 ms.
        t.clock.advance(499);
        expect((await alive.runOnce()).claimed).toBe(0);
        t.clock.advance(1);
        expect((await alive.runOnce()).claimed).toBe(1);
        const rescued = { type: "completed", result: { type: "success", returnValue: "rescued on attempt 2" } };
        expect(await alive.status(runId)).toEqual(rescued);
        release.resolve("late result");
        await deadStep;
        expect(await alive.status(runId)).toEqual(rescued);
      });

      test("with maxFailures 0 a lost worker fails the run", async () => {
        const t = await ctx();
        const frozen = new ManualClock(T0);
        const dead = t.retrier({ leaseMs: 1000, clock: frozen, maxFailures: 0 });
        const alive = t.retrier({ leaseMs: 1000, maxFailures: 0 });
        const never = deferred();
        const job = dead.defineAction("job", () => never.promise);
        const runId = await dead.run(job, {});
        const started = nextEvent(dead, "started");
        void dead.runOnce();
        await started;
        // Past the lease and the dead instance's maintenance leadership.
        t.clock.advance(10_000);
        expect((await alive.runOnce()).rescued).toBe(1);
        const s = await alive.status(runId);
        expect(s.type === "completed" && s.result.type === "failed" && s.result.error).toMatch(/^worker lost/);
        never.resolve();
      });
    });

    describe("options", () => {
      test("bad options are rejected with the option's name and range", async () => {
        const t = await ctx();
        const bad: [unknown, RegExp][] = [
          [{ initialBackoffMs: -1 }, /initialBackoffMs: must be a finite number from 0 to 86400000, got -1/],
          [{ initialBackoffMs: NaN }, /initialBackoffMs: must be a finite number/],
          [{ initialBackoffMs: "250" }, /initialBackoffMs: .* got "250"/],
          [{ base: 0.5 }, /base: must be a finite number from 1 to 1000, got 0.5/],
          [{ base: Infinity }, /base: must be a finite number/],
          [{ maxFailures: -1 }, /maxFailures: must be an integer from 0 to 999, got -1/],
          [{ maxFailures: 1.5 }, /maxFailures: must be an integer/],
          [{ maxFailures: 1000 }, /maxFailures: must be an integer from 0 to 999/],
          [{ logLevel: "LOUD" }, /logLevel: must be one of DEBUG, TRACE, INFO, REPORT, WARN, ERROR/],
          [{ name: "a b" }, /name: must be 1 to 100 characters/],
          [{ leaseMs: 5 }, /leaseMs: must be an integer from 100/],
          [{ logger: {} }, /logger: must have debug, info, warn and error/],
          [{ clock: {} }, /clock: must have now, setTimeout and clearTimeout/],
          [{ random: 0.5 }, /random: must be a function/],
          [{ maxRetries: 3 }, /maxRetries: is not an option of ActionRetrier \(allowed: initialBackoffMs, base, maxFailures/],
          [{ maxParallelism: 5 }, /maxParallelism: is not an option of ActionRetrier/],
          [5, /options: must be an object/],
        ];
        for (const [options, message] of bad) {
          let e: unknown;
          try {
            new ActionRetrier(t.s.store, options as never);
          } catch (err) {
            e = err;
          }
          expect(e, JSON.stringify(options)).toBeInstanceOf(InvalidArgumentError);
          expect((e as Error).message, JSON.stringify(options)).toMatch(message);
        }
        expect(() => new ActionRetrier({} as never)).toThrow(/store: must be a store/);
      });

      test("retriers with different names share a store independently", async () => {
        const t = await ctx();
        const a = t.retrier({ name: "first" });
        const b = t.retrier({ name: "second" });
        expect(a.name).toBe("first");
        const fa = a.defineAction("f", () => "a");
        b.defineAction("f", () => "b");
        const id = await a.run(fa, {});
        expect((await b.runOnce()).claimed).toBe(0);
        expect(await errorOf(() => b.status(id))).toBeInstanceOf(UnknownRunError);
        await a.runOnce();
        expect(await a.status(id)).toEqual({ type: "completed", result: { type: "success", returnValue: "a" } });
      });

      test("start() runs work in the background until stop()", async () => {
        const t = await ctx();
        const r = t.retrier();
        const a = r.defineAction("a", (_c, n: number) => n + 1);
        await r.start();
        const done = nextEvent(r, "completed");
        const runId = await r.run(a, 1);
        expect((await done).workId).toBe(runId);
        expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "success", returnValue: 2 } });
        await r.stop();
      });
    });
  });
}
