/**
 * Bad values of the priority, key and unique-key options are refused with an
 * InvalidArgumentError naming the field, on every enqueue form, and write nothing.
 */
import { describe, expect, test } from "vitest";
import type { StoreHarness } from "./harness.js";
import { useTestContext } from "./context.js";
import { expectRefused, type BadCase } from "./bad-input.js";

export function defineKeysInputTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("bad priority, key and unique-key values", () => {
    const ctx = useTestContext(harness);

    test("are refused, naming the field, by every enqueue form, and write nothing", async () => {
      const t = await ctx();
      const pool = t.pool();
      const a = pool.defineAction("a", (_c, _args: unknown) => 1);
      const m = pool.defineMutation("m", (_c, _args: unknown) => 1);
      const bad: [string, string, Record<string, unknown>][] = [
        ["priority 1.5", "priority", { priority: 1.5 }],
        ["priority 5000", "priority", { priority: 5000 }],
        ["priority -1001", "priority", { priority: -1001 }],
        ["priority NaN", "priority", { priority: NaN }],
        ["priority a string", "priority", { priority: "1" }],
        ["empty key", "key", { key: "" }],
        ["key of 201 characters", "key", { key: "k".repeat(201) }],
        ["key a number", "key", { key: 7 }],
        ["key with NUL", "key", { key: "a\u0000b" }],
        ["empty uniqueKey", "uniqueKey", { uniqueKey: "" }],
        ["uniqueKey of 201 characters", "uniqueKey", { uniqueKey: "u".repeat(201) }],
        ["onConflict without uniqueKey", "onConflict", { onConflict: "keep" }],
        ["onConflict replace without uniqueKey", "onConflict", { onConflict: "replace" }],
        ["onConflict not keep or replace", "onConflict", { uniqueKey: "u", onConflict: "merge" }],
      ];
      const cases: BadCase[] = bad.flatMap(([name, field, options]) => [
        { name, field, call: () => pool.enqueueAction(a, {}, options as never) },
        { name: `${name} (mutation)`, field, call: () => pool.enqueueMutation(m, {}, options as never) },
        { name: `${name} (batch)`, field, call: () => pool.enqueueActionBatch(a, [1, 2], options as never) },
        { name: `${name} (mutation batch)`, field, call: () => pool.enqueueMutationBatch(m, [1, 2], options as never) },
      ]);
      for (const c of cases) await expectRefused(c);
      await expect(pool.enqueueAction(a, {}, { priority: 5000 })).rejects.toThrow(
        /priority: must be an integer from -1000 to 1000, got 5000/,
      );
      await expect(pool.enqueueAction(a, {}, { key: "" })).rejects.toThrow(/key: must be a string of 1 to 200 characters/);
      await expect(pool.enqueueAction(a, {}, { onConflict: "keep" })).rejects.toThrow(/onConflict: is only used with uniqueKey/);
      expect(await harness.countWorkRows(t.h)).toBe(0);
      // The edges of the ranges are accepted.
      await pool.enqueueAction(a, {}, { priority: -1000, key: "k".repeat(200), uniqueKey: "u".repeat(200) });
      await pool.enqueueAction(a, {}, { priority: 1000, key: "é" });
      expect(await harness.countWorkRows(t.h)).toBe(2);
    });
  });
}
