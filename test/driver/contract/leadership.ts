/** The driver contract, maintenance leadership: one holder per pool, until it lapses or is given up. */
import { describe, expect, test } from "vitest";
import type { StoreHarness } from "../../conformance/harness.js";
import { POOL, T0, useDriver } from "./setup.js";

/** Registers the leadership tests for one store. */
export function defineLeadershipContract<Tx>(harness: StoreHarness<Tx>): void {
  describe("leadership", () => {
    const driver = useDriver(harness);

    test("only one worker holds maintenance leadership until it lapses or is released", async () => {
      const d = await driver();
      expect(await d.acquireLeadership(POOL, "a", T0, 1000)).toBe(true);
      expect(await d.acquireLeadership(POOL, "b", T0 + 500, 1000)).toBe(false);
      expect(await d.acquireLeadership(POOL, "a", T0 + 500, 1000)).toBe(true);
      expect(await d.acquireLeadership(POOL, "b", T0 + 1600, 1000)).toBe(true);
      await d.releaseLeadership(POOL, "b");
      expect(await d.acquireLeadership(POOL, "c", T0 + 1700, 1000)).toBe(true);
    });
  });
}
