/** ActionRetrier: scheduling. */
import { describe, expect, test } from "vitest";
import { InvalidArgumentError, UnknownRunError, Workpool, type RunId } from "../../src/index.js";
import { errorOf, T0, type RetrierStoreFactory } from "./helpers.js";
import { useRetrierContext } from "./context.js";

/** Registers the "scheduling" tests for one store. */
export function defineSchedulingTests<Tx>(factory: RetrierStoreFactory<Tx>): void {
  describe("scheduling", () => {
    const ctx = useRetrierContext(factory);
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
        [
          () => r.run(a, {}, { retry: true } as never),
          /retry: is not an option of run\(\) \(allowed: onComplete, context, initialBackoffMs, base, maxFailures, logLevel, runAt, runAfter, tx\)$/,
        ],
        [
          () => r.runAt(T0, a, {}, { retries: 1 } as never),
          /retries: is not an option of runAt\(\) \(allowed: onComplete, context, initialBackoffMs, base, maxFailures, logLevel, tx\)$/,
        ],
        [() => r.run(a, {}, { maxFailures: 1.5 }), /maxFailures: must be an integer/],
        [() => r.run(a, {}, { base: 0.5 }), /base: must be a finite number from 1 to 1000, got 0.5/],
        [() => r.run(a, {}, { initialBackoffMs: -1 }), /initialBackoffMs: must be a finite number from 0 to 86400000/],
        // @ts-expect-error context needs onComplete in the types too
        [() => r.run(a, {}, { context: { a: 1 } }), /context: is only delivered to onComplete/],
        [() => r.run(a, {}, { onComplete: done, context: { f: () => 1 } as never }), /context.f: a function is not JSON/],
        [() => r.run(a, {}, "fast" as never), /options: must be an object/],
        [() => r.run(a, { when: new Date() }), /args.when: a Date is not plain JSON/],
        [() => r.run(a, undefined), /args: undefined is not JSON/],
        [() => r.run(otherAction, {}), /handle: must be a handle returned by this pool's defineAction\(\) \(it belongs to pool "other"\)/],
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
}
