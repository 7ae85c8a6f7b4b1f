/**
 * The driver contract, the bulk retry (RedriveOps): the matching finished work not yet
 * retried in id order between two ids, and a page's retry, which copies every column as
 * admin.retry() does and records each work's retry once.
 */
import { describe, expect, test } from "vitest";
import type { Driver, NewWork } from "../../../src/driver/driver.js";
import type { RedriveQuery } from "../../../src/driver/redrive-ops.js";
import { newWorkLike } from "../../../src/driver/work-columns.js";
import { newWorkId } from "../../../src/ids.js";
import type { StoreHarness } from "../../conformance/harness.js";
import { claimBy, everyColumn, expectEveryColumn, POOL, T0, useDriver } from "./setup.js";

const FAILED = '{"kind":"failed","error":"x"}';

/** Failed work of POOL, whatever its handler, key or finish time, but a workflow's own. */
const ALL_FAILED: RedriveQuery = {
  kind: "failed",
  fnName: null,
  key: null,
  finishedFrom: null,
  finishedBefore: null,
  notPrefix: "internal:",
};

/** Registers the bulk retry's tests for one store. */
export function defineRedriveContract<Tx>(harness: StoreHarness<Tx>): void {
  describe("bulk retry", () => {
    const driver = useDriver(harness);

    /** Rows with a value of their own in every column, claimed and finished at T0 + `i`: failed, but the one of `success`. */
    async function finished(d: Driver<Tx>, rows: NewWork[], success: NewWork | null = null): Promise<void> {
      await d.insertWork(rows);
      expect((await d.claim(POOL, claimBy("a", rows.length))).claimed).toHaveLength(rows.length);
      await d.transaction((ops) =>
        ops.finish(
          rows.map((r, i) => ({ id: r.id, result: r === success ? '{"kind":"success"}' : FAILED, finishedAt: T0 + i, ocState: "none" })),
        ),
      );
    }

    test("a page's retry copies every column as retry() does, due at its time, and records each work's retry once", async () => {
      const d = await driver(10);
      const [a, b, ok] = [everyColumn(1), everyColumn(2), everyColumn(3)];
      await finished(d, [a, b, ok], ok);
      const pairs = [a, b, ok].map((w, i) => ({ id: w.id, newId: newWorkId(T0 + 100 + i) }));
      const unknown = { id: newWorkId(T0 - 5000), newId: newWorkId(T0 + 200) };
      expect(await d.redrive("other-pool", pairs, T0 + 50)).toEqual([]);
      expect(await d.redrive(POOL, [...pairs, unknown], T0 + 50)).toEqual(pairs.slice(0, 2));
      for (const [w, p] of [
        [a, pairs[0]!],
        [b, pairs[1]!],
      ] as const) {
        const [made] = await d.readWork(POOL, [p.newId]);
        expectEveryColumn(made, newWorkLike(w, p.newId, T0 + 50), "the retry");
        expect(made).toMatchObject({ state: "pending", attempt: 0 });
        expect((await d.readWorkDetail(w.id))!.retriedAs).toBe(p.newId);
      }
      expect(await d.readWork(POOL, [pairs[2]!.newId, unknown.newId])).toEqual([]);
      // Once: a second page of the same work retries none of it.
      expect(await d.redrive(POOL, [{ id: a.id, newId: newWorkId(T0 + 300) }], T0 + 60)).toEqual([]);
    });

    test("the matching work not yet retried, in id order after one id and up to another; the highest of it", async () => {
      const d = await driver(10);
      const rows = [everyColumn(1), everyColumn(2), everyColumn(3), everyColumn(4), everyColumn(5)];
      rows[3]!.onComplete = "internal:step-done";
      await finished(d, rows, rows[4]!);
      const ids = rows.map((r) => r.id);
      expect(await d.listRedrivable(POOL, ALL_FAILED, null, null, 10)).toEqual(ids.slice(0, 3));
      expect(await d.lastRedrivable(POOL, ALL_FAILED)).toBe(ids[2]);
      expect(await d.listRedrivable(POOL, ALL_FAILED, ids[0]!, ids[1]!, 10)).toEqual([ids[1]]);
      expect(await d.listRedrivable(POOL, ALL_FAILED, null, null, 2)).toEqual(ids.slice(0, 2));
      // finished_at: T0 + index; from is inclusive, before exclusive.
      expect(await d.listRedrivable(POOL, { ...ALL_FAILED, finishedFrom: T0 + 1, finishedBefore: T0 + 2 }, null, null, 10)).toEqual([
        ids[1],
      ]);
      expect(await d.listRedrivable(POOL, { ...ALL_FAILED, fnName: rows[2]!.fnName, key: rows[2]!.key }, null, null, 10)).toEqual([ids[2]]);
      expect(await d.listRedrivable(POOL, { ...ALL_FAILED, kind: "canceled" }, null, null, 10)).toEqual([]);
      expect(await d.redrive(POOL, [{ id: ids[0]!, newId: newWorkId(T0 + 100) }], T0 + 50)).toHaveLength(1);
      expect(await d.listRedrivable(POOL, ALL_FAILED, null, null, 10)).toEqual(ids.slice(1, 3));
      expect(await d.lastRedrivable("other-pool", ALL_FAILED)).toBeNull();
    });
  });
}
