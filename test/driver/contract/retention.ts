/** The driver contract, retention: finished rows are deleted only once their onComplete is settled. */
import { describe, expect, test } from "vitest";
import type { StoreHarness } from "../../conformance/harness.js";
import { claimBy, POOL, row, T0, useDriver } from "./setup.js";

/** Registers the retention tests for one store. */
export function defineRetentionContract<Tx>(harness: StoreHarness<Tx>): void {
  describe("retention", () => {
    const driver = useDriver(harness);

    test("retention deletes finished rows only once their onComplete is settled", async () => {
      const d = await driver();
      const [plain, withOc] = [row(), row(T0, { onComplete: "oc" })];
      await d.insertWork([plain, withOc]);
      await d.claim(POOL, claimBy("a", 2));
      await d.transaction((ops) =>
        ops.finish([
          { id: plain.id, result: '{"kind":"success"}', finishedAt: T0, ocState: "none" },
          { id: withOc.id, result: '{"kind":"success"}', finishedAt: T0, ocState: "pending" },
        ]),
      );
      expect(await d.deleteFinishedBefore(POOL, T0 + 1, 10)).toBe(1);
      expect(await d.deleteFinishedIds(POOL, [withOc.id])).toEqual([]);
      await d.transaction((ops) => ops.updateOnComplete([{ id: withOc.id, ocState: "done", ocAttempts: 0, ocRunAt: null, ocError: null }]));
      expect(await d.deleteFinishedIds(POOL, [withOc.id])).toEqual([withOc.id]);
    });
  });
}
