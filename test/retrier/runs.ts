/** ActionRetrier: runs and retries. */
import { describe, expect, test } from "vitest";
import { InvalidArgumentError, NonRetryableError } from "../../src/index.js";
import { deferred, errorOf, T0, type RetrierStoreFactory } from "./helpers.js";
import { useRetrierContext, DAY } from "./context.js";

/** Registers the "runs and retries" tests for one store. */
export function defineRunTests<Tx>(factory: RetrierStoreFactory<Tx>): void {
  describe("runs and retries", () => {
    const ctx = useRetrierContext(factory);
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
}
