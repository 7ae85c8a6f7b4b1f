/** ActionRetrier: options. */
import { describe, expect, test } from "vitest";
import { ActionRetrier, InvalidArgumentError, UnknownRunError } from "../../src/index.js";
import { errorOf, nextEvent, type RetrierStoreFactory } from "./helpers.js";
import { useRetrierContext } from "./context.js";

/** Registers the "options" tests for one store. */
export function defineOptionTests<Tx>(factory: RetrierStoreFactory<Tx>): void {
  describe("options", () => {
    const ctx = useRetrierContext(factory);
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
}
