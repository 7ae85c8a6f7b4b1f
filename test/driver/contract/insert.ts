/**
 * The driver contract, enqueue: every column of the work row's list is written by each
 * insert form and read back by every read (readWork, the claims, lockWork, the admin's
 * detail), unique keys resolve to one pending work, and insertAndClaim (PostgreSQL) claims
 * only what a claim would.
 */
import { describe, expect, test } from "vitest";
import type { Driver, NewWork } from "../../../src/driver/driver.js";
import type { StoreHarness } from "../../conformance/harness.js";
import { claimBy, everyColumn, expectEveryColumn, POOL, row, T0, useDriver } from "./setup.js";

/** Registers the insert tests for one store. */
export function defineInsertContract<Tx>(harness: StoreHarness<Tx>): void {
  describe("insert", () => {
    const driver = useDriver(harness);

    /** Reads `works` back through every read of a pending row and checks every column. */
    async function expectStored(d: Driver<Tx>, works: readonly NewWork[], how: string): Promise<void> {
      const ids = works.map((w) => w.id);
      const read = new Map((await d.readWork(POOL, ids)).map((r) => [r.id, r]));
      const locked = new Map((await d.transaction((ops) => ops.lockWork(POOL, ids))).map((r) => [r.id, r]));
      for (const w of works) {
        expectEveryColumn(read.get(w.id), w, `${how}, readWork`);
        expectEveryColumn(locked.get(w.id), w, `${how}, lockWork`);
        expectEveryColumn((await d.readWorkDetail(w.id)) ?? undefined, w, `${how}, readWorkDetail`);
      }
    }

    test("every column of the list is written by each insert form and read back by every read", async () => {
      const d = await driver(10);
      const one = everyColumn(1);
      // A batch of one enqueue call differs only in id and args; any other batch differs anywhere.
      const base = everyColumn(2);
      const shared = [base, { ...base, id: everyColumn(3).id, args: "args-other" }];
      const mixed = [everyColumn(4), everyColumn(5)];
      await d.insertWork([one]);
      await d.insertWork(shared);
      await d.insertWork(mixed);
      await expectStored(d, [one], "one row");
      await expectStored(d, shared, "a shared batch");
      await expectStored(d, mixed, "a batch of different rows");
    });

    test("every column of the list is read back by the claims, in and out of a transaction", async () => {
      const d = await driver(10);
      const [a, b] = [everyColumn(1, T0 - 2), everyColumn(2, T0 - 1)];
      await d.insertWork([a, b]);
      const claimed = (await d.claim(POOL, claimBy("a", 1))).claimed;
      expectEveryColumn(claimed[0], a, "claim");
      const inTx = await d.transaction(async (ops) => (await ops.claim(POOL, claimBy("a", 1))).claimed);
      expectEveryColumn(inTx[0], b, "claim in a transaction");
      const c = everyColumn(3, T0 - 1);
      await d.insertWork([c]);
      const res = await d.complete(
        POOL,
        [{ id: a.id, attempt: 1, status: "success", result: '{"kind":"success"}', runAt: null }],
        T0,
        claimBy("a", 1),
      );
      expectEveryColumn(res.claim?.claimed[0], c, "complete's claim");
    });

    test("insertAndClaim writes and reads back every column of the list", async (ctx) => {
      const d = await driver(10);
      if (!d.insertAndClaim) return ctx.skip(`the ${d.dialect} driver has no insertAndClaim (enqueue and claim are two transactions)`);
      const w = everyColumn(1, T0);
      expectEveryColumn((await d.insertAndClaim(w, claimBy("a", 1))) ?? undefined, w, "insertAndClaim");
      expectEveryColumn((await d.readWork(POOL, [w.id]))[0], w, "insertAndClaim, stored");
    });

    test("insertWork resolves a unique key to the pending work that has it: kept, or replaced", async () => {
      const d = await driver(10);
      const first = row(T0 + 1000, { uniqueKey: "u", args: '{"v":1}' });
      expect(await d.insertWork([first])).toEqual([first.id]);
      expect(await d.insertWork([row(T0, { uniqueKey: "u", args: '{"v":2}' })])).toEqual([first.id]);
      expect((await d.readWork(POOL, [first.id]))[0]).toMatchObject({ args: '{"v":1}', runAt: T0 + 1000 });
      const replace = row(T0, { uniqueKey: "u", onConflict: "replace", args: '{"v":3}', priority: 7, key: "k" });
      expect(await d.insertWork([replace])).toEqual([first.id]);
      expect((await d.readWork(POOL, [first.id]))[0]).toMatchObject({ args: '{"v":3}', runAt: T0, priority: 7, key: "k" });
      // Started: the key is free again.
      await d.claim(POOL, claimBy("a", 10));
      const again = row(T0, { uniqueKey: "u" });
      expect(await d.insertWork([again])).toEqual([again.id]);
      expect((await d.counts(POOL, T0)).pending).toBe(1);
    });

    test("insertAndClaim claims keyed work only while its key is under the limit", async (ctx) => {
      const d = await driver(10, 1);
      if (!d.insertAndClaim) return ctx.skip(`the ${d.dialect} driver has no insertAndClaim (enqueue and claim are two transactions)`);
      expect(await d.insertAndClaim(row(T0, { key: "k" }), claimBy("a", 1))).toMatchObject({ state: "running", key: "k" });
      expect(await d.insertAndClaim(row(T0, { key: "k" }), claimBy("a", 1))).toBeNull();
      // The waiting row is due, so other new work waits its turn too.
      expect(await d.insertAndClaim(row(T0, { key: "other" }), claimBy("a", 1))).toBeNull();
      expect((await d.claim(POOL, claimBy("a", 10))).claimed.map((r) => r.key)).toEqual(["other"]);
      expect(await d.insertAndClaim(row(T0, { key: "third", priority: -3 }), claimBy("a", 1))).toMatchObject({
        priority: -3,
        key: "third",
      });
    });

    test("insertAndClaim claims new work only when a slot is free and no other due work waits", async (ctx) => {
      const d = await driver(1);
      if (!d.insertAndClaim) return ctx.skip(`the ${d.dialect} driver has no insertAndClaim (enqueue and claim are two transactions)`);
      const first = await d.insertAndClaim(row(), claimBy("a", 1));
      expect(first).toMatchObject({ state: "running", attempt: 1, workerId: "a" });
      expect(await d.insertAndClaim(row(), claimBy("a", 1))).toBeNull();
      expect((await d.counts(POOL, T0)).pending).toBe(1);
    });
  });
}
