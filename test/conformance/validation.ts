/**
 * Bad input: rejected before anything is written, with an error naming the field and
 * the allowed values. The checks that never reach the store run once, in
 * test/unit/input-validation.test.ts; these read the store back.
 */
import { describe, expect, test } from "vitest";
import { InvalidArgumentError, Workpool } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext } from "./context.js";

export function defineValidationTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("bad input", () => {
    const ctx = useTestContext(harness);

    test("enqueue rejects bad options and payloads and writes nothing", async () => {
      const t = await ctx();
      const pool = t.pool();
      const a = pool.defineAction("a", (_c, _args: unknown) => 1);
      const m = pool.defineMutation("m", (_c, _args: unknown) => 1);
      const oc = pool.defineOnComplete("oc", () => undefined);
      const other = new Workpool(t.h.store, { name: "other" }).defineAction("a", () => 1);
      const cycle: Record<string, unknown> = {};
      cycle.self = cycle;
      const cases: [() => Promise<unknown>, RegExp][] = [
        // @ts-expect-error runAt and runAfter are exclusive in the types too
        [() => pool.enqueueAction(a, {}, { runAt: 1, runAfter: 1 }), /runAt: give runAt .* not both/],
        [() => pool.enqueueAction(a, {}, { runAt: NaN }), /runAt: must be a finite number/],
        [() => pool.enqueueAction(a, {}, { runAfter: Infinity }), /runAfter: must be a finite number/],
        [
          () => pool.enqueueAction(a, {}, { retry: { maxAttempts: 0, initialBackoffMs: 1, base: 2 } }),
          /retry.maxAttempts: must be an integer from 1/,
        ],
        [() => pool.enqueueAction(a, {}, { retry: { maxAttempts: 2, initialBackoffMs: -1, base: 2 } }), /retry.initialBackoffMs/],
        [
          () => pool.enqueueAction(a, {}, { retry: { maxAttempts: 2, initialBackoffMs: 1, base: 0 } }),
          /retry.base: must be a finite number >= 1/,
        ],
        [() => pool.enqueueAction(a, {}, { retry: "yes" as never }), /retry: must be a boolean/],
        [() => pool.enqueueMutation(m, {}, { retry: true } as never), /retry: is not an option of enqueueMutation \(mutations run once/],
        [() => pool.enqueueMutation(m, {}, { timeoutMs: 5 } as never), /timeoutMs: is not an option of enqueueMutation/],
        [() => pool.enqueueAction(a, () => 1), /args: a function is not JSON/],
        [() => pool.enqueueAction(a, { n: 10n }), /args.n: a BigInt is not JSON/],
        [() => pool.enqueueAction(a, cycle), /args.self: is a cycle/],
        [() => pool.enqueueAction(a, undefined), /args: undefined is not JSON/],
        [() => pool.enqueueAction(a, { when: new Date() }), /args.when: a Date is not plain JSON/],
        [() => pool.enqueueAction(a, { n: NaN }), /args.n: NaN is not JSON/],
        [() => pool.enqueueAction(a, [1, undefined]), /args\[1\]: undefined/],
        [() => pool.enqueueAction(a, { big: "x".repeat(1024 * 1024 + 1) }), /args: is \d+ bytes as JSON; the limit is 1048576 bytes/],
        [() => pool.enqueueAction(a, {}, { onComplete: oc, context: { f: () => 1 } }), /context.f: a function is not JSON/],
        // @ts-expect-error context needs onComplete in the types too
        [() => pool.enqueueAction(a, {}, { context: { a: 1 } }), /context: is only delivered to onComplete/],
        [
          () => pool.enqueueAction(m as never, {}),
          /handle: is a mutation handle \("m"\); expected a action handle|handle: is a mutation handle/,
        ],
        [
          () => pool.enqueueAction(other, {}),
          /handle: must be a handle returned by this pool's defineAction\(\) \(it belongs to pool "other"\)/,
        ],
        [() => pool.enqueueAction(a, {}, { onComplete: a as never }), /onComplete: is a action handle|onComplete:/],
        [() => pool.enqueueAction(a, {}, { timeoutMs: 0 }), /timeoutMs: must be an integer from 1/],
        [() => pool.enqueueAction(a, {}, { bogus: 1 } as never), /bogus: is not an option of enqueueAction/],
        [() => pool.enqueueActionBatch(a, "abc" as never), /argsArray: must be an array/],
        [() => pool.enqueueActionBatch(a, [1, { x: () => 2 }]), /argsArray\[1\].x: a function is not JSON/],
        [() => pool.enqueueAction(a, {}, { name: "" }), /name: must be 1 to 200 characters/],
        [() => pool.cancelAll({ before: NaN }), /before: must be a finite epoch time/],
        [() => pool.cancel(42 as never), /id: is not a work id/],
        [() => pool.stop({ timeoutMs: -1 }), /timeoutMs: must be an integer from 0/],
      ];
      for (const [call, message] of cases) {
        let error: unknown;
        try {
          await call();
        } catch (e) {
          error = e;
        }
        expect(error, String(message)).toBeInstanceOf(InvalidArgumentError);
        expect((error as Error).message, String(message)).toMatch(message);
      }
      const counts = await t.driver.counts(pool.name, t.clock.now());
      expect(counts.pending + counts.running).toBe(0);
    });

    test("scheduled times are clamped like boundScheduledTime, and logged", async () => {
      const t = await ctx();
      const pool = t.pool();
      const a = pool.defineAction("a", () => 1);
      const year = 365 * 24 * 3600 * 1000;
      const past = await pool.enqueueAction(a, {}, { runAt: t.clock.now() - 2 * year });
      const future = await pool.enqueueAction(a, {}, { runAt: t.clock.now() + 5 * year });
      expect(t.logger.matching("more than a year in the past")).toHaveLength(1);
      expect(t.logger.matching("more than four years ahead")).toHaveLength(1);
      expect((await pool.runOnce()).claimed).toBe(1);
      expect((await pool.status(past)).state).toBe("finished");
      t.clock.advance(year - 1);
      expect((await pool.runOnce()).claimed).toBe(0);
      t.clock.advance(1);
      expect((await pool.runOnce()).claimed).toBe(1);
      expect((await pool.status(future)).state).toBe("finished");
    });
  });
}
