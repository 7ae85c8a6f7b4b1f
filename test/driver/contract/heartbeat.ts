/** The driver contract, leases: a heartbeat renews this worker's current attempts and reports the rest. */
import { describe, expect, test } from "vitest";
import type { StoreHarness } from "../../conformance/harness.js";
import { claimBy, POOL, row, T0, useDriver } from "./setup.js";

/** Registers the heartbeat tests for one store. */
export function defineHeartbeatContract<Tx>(harness: StoreHarness<Tx>): void {
  describe("heartbeat", () => {
    const driver = useDriver(harness);

    test("heartbeat renews this worker's current attempts and reports lost and canceled ones", async () => {
      const d = await driver(10);
      const [x, y] = [row(), row()];
      await d.insertWork([x, y]);
      await d.claim(POOL, claimBy("a", 2));
      await d.transaction((ops) => ops.requestCancel([y.id]));
      const beat = await d.heartbeat(
        POOL,
        "a",
        [
          { id: x.id, attempt: 1 },
          { id: y.id, attempt: 1 },
        ],
        { clock: () => T0 + 1000, leaseMs: 8000 },
      );
      expect(beat).toEqual({ cancelRequested: [{ id: y.id, attempt: 1 }], lost: [] });
      expect((await d.readWork(POOL, [x.id]))[0]!.leaseUntil).toBe(T0 + 9000);
      // Another worker's heartbeat, and one for an attempt that is not current, hold nothing; each lost answer names its attempt.
      const later = { clock: () => T0 + 1500, leaseMs: 8000 };
      expect((await d.heartbeat(POOL, "b", [{ id: x.id, attempt: 1 }], later)).lost).toEqual([{ id: x.id, attempt: 1 }]);
      expect((await d.heartbeat(POOL, "a", [{ id: x.id, attempt: 7 }], later)).lost).toEqual([{ id: x.id, attempt: 7 }]);
      expect((await d.readWork(POOL, [x.id]))[0]!.leaseUntil).toBe(T0 + 9000);
    });
  });
}
