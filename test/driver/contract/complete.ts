/** The driver contract, results: the one-call complete(), its fences, and what a transaction sees before it finishes a row. */
import { describe, expect, test } from "vitest";
import type { StoreHarness } from "../../conformance/harness.js";
import { claimBy, POOL, row, T0, useDriver } from "./setup.js";

/** Registers the result tests for one store. */
export function defineCompleteContract<Tx>(harness: StoreHarness<Tx>): void {
  describe("complete", () => {
    const driver = useDriver(harness);

    test("complete() writes outcomes fenced by attempt and lets a requested cancel win", async () => {
      const d = await driver(10);
      const [ok, stale, canceled] = [row(), row(), row()];
      await d.insertWork([ok, stale, canceled]);
      await d.claim(POOL, claimBy("a", 3));
      await d.transaction((ops) => ops.requestCancel([canceled.id]));
      const res = await d.complete(
        POOL,
        [
          { id: ok.id, attempt: 1, status: "success", result: '{"kind":"success","returnValue":1}', runAt: null },
          { id: stale.id, attempt: 5, status: "success", result: '{"kind":"success","returnValue":2}', runAt: null },
          { id: canceled.id, attempt: 1, status: "success", result: '{"kind":"success","returnValue":3}', runAt: null },
        ],
        T0,
        null,
      );
      expect(res.stale).toEqual([stale.id]);
      expect(res.canceled).toEqual([canceled.id]);
      const rows = new Map((await d.readWork(POOL, [ok.id, stale.id, canceled.id])).map((r) => [r.id, r]));
      expect(rows.get(ok.id)).toMatchObject({ state: "finished", result: '{"kind":"success","returnValue":1}' });
      expect(rows.get(stale.id)).toMatchObject({ state: "running", attempt: 1 });
      expect(rows.get(canceled.id)).toMatchObject({ state: "finished", result: '{"kind":"canceled"}' });
    });

    test("complete() claims for the freed slots within the per-key limit", async () => {
      const d = await driver(10, 1);
      const rows = [row(T0 - 3, { key: "k" }), row(T0 - 2, { key: "k" }), row(T0 - 1, { key: "k" })];
      await d.insertWork(rows);
      const first = await d.claim(POOL, claimBy("a", 10));
      expect(first.claimed.map((r) => r.id)).toEqual([rows[0]!.id]);
      const res = await d.complete(
        POOL,
        [{ id: rows[0]!.id, attempt: 1, status: "success", result: '{"kind":"success"}', runAt: null }],
        T0,
        claimBy("a", 10),
      );
      expect(res.claim?.claimed.map((r) => r.id)).toEqual([rows[1]!.id]);
      // A retry frees the key too: the next row runs while the first waits out its backoff.
      const retry = await d.complete(
        POOL,
        [{ id: rows[1]!.id, attempt: 1, status: "retrying", result: null, runAt: T0 + 1000 }],
        T0,
        claimBy("a", 10),
      );
      expect(retry.claim?.claimed.map((r) => r.id)).toEqual([rows[2]!.id]);
    });

    test("a locked row shows its current attempt, so a stale result can be told apart before finish", async () => {
      const d = await driver(10);
      const r = row();
      await d.insertWork([r]);
      await d.claim(POOL, claimBy("a", 1));
      // The lease lapses and another worker takes the work: attempt 2.
      await d.transaction(async (ops) => {
        const expired = await ops.lockExpired(POOL, T0 + 2000, 10);
        expect(expired.map((e) => e.id)).toEqual([r.id]);
        await ops.reschedule([{ id: r.id, runAt: T0 + 2000 }]);
      });
      await d.claim(POOL, claimBy("b", 1, T0 + 2000));
      const locked = await d.transaction((ops) => ops.lockWork(POOL, [r.id]));
      expect(locked[0]).toMatchObject({ state: "running", attempt: 2, workerId: "b" });
    });
  });
}
