/**
 * The driver contract, the admin API's reads and its retry: pools with their raw counts,
 * listings by page and by each filter, one work's detail, and a retry recorded once.
 */
import { describe, expect, test } from "vitest";
import type { WorkListQuery } from "../../../src/driver/admin-ops.js";
import type { Driver, NewWork } from "../../../src/driver/driver.js";
import type { StoreHarness } from "../../conformance/harness.js";
import { newWork } from "../../helpers/new-work.js";
import { claimBy, everyColumn, expectEveryColumn, POOL, row, T0, useDriver } from "./setup.js";

const FAILED = '{"kind":"failed","error":"x"}';

/** A listing query with no filter but `overrides`. */
function query(overrides: Partial<WorkListQuery> = {}): WorkListQuery {
  return { state: null, fnName: null, id: null, prefix: null, key: null, beforeId: null, limit: 100, ...overrides };
}

/** Registers the admin tests for one store. */
export function defineAdminReadContract<Tx>(harness: StoreHarness<Tx>): void {
  describe("admin reads", () => {
    const driver = useDriver(harness);

    /**
     * One work in each state a listing tells apart, claimed and finished at T0 + 1:
     * running, success, failed, canceled, retrying (due at T0 + 500), pending due, pending later.
     */
    async function fixture(d: Driver<Tx>) {
      const w = {
        running: row(T0 - 10, { fnName: "charge", key: "k2" }),
        success: row(T0 - 9, { fnName: "charge" }),
        failed: row(T0 - 8, { fnName: "report", name: "sendout" }),
        canceled: row(T0 - 7),
        retrying: row(T0 - 6),
        due: row(T0 - 5, { fnName: "send", name: "Welcome mail", key: "k1" }),
        later: row(T0 + 1000, { fnName: "send" }),
      };
      // The pending two come after the claim, which takes the other five whatever the keys' turns.
      const { due, later, ...claimed } = w;
      await d.insertWork(Object.values(claimed));
      await d.claim(POOL, claimBy("a", 5));
      await d.transaction(async (ops) => {
        await ops.finish([
          { id: w.success.id, result: '{"kind":"success"}', finishedAt: T0 + 1, ocState: "none" },
          { id: w.failed.id, result: FAILED, finishedAt: T0 + 1, ocState: "none", attemptEntry: '{"attempt":1,"outcome":"failed"}' },
          { id: w.canceled.id, result: '{"kind":"canceled"}', finishedAt: T0 + 1, ocState: "none" },
        ]);
        await ops.reschedule([{ id: w.retrying.id, runAt: T0 + 500 }]);
      });
      await d.insertWork([due, later]);
      return w;
    }

    test("readPools gives each pool its stored limits and the raw counts of its rows", async () => {
      const d = await driver(10);
      await fixture(d);
      await d.insertWork([newWork("other", T0)]);
      const pools = await d.readPools(T0 + 2, T0);
      expect(pools).toEqual([
        {
          name: POOL,
          maxParallelism: 10,
          pausedFrom: null,
          keyParallelism: null,
          rateLimit: null,
          keyRateLimit: null,
          pending: 3,
          retrying: 1,
          running: 1,
          finished: 3,
          failed: 1,
          canceled: 1,
          oldestDueRunAt: T0 - 5,
          retriedSince: 1,
          finishedSince: 3,
          waitedCount: 4,
          // Each claimed at T0: waits of 10, 9, 8 and 7 ms.
          waitedSumMs: 34,
        },
        expect.objectContaining({ name: "other", maxParallelism: null, pending: 1, retrying: 0, running: 0, finished: 0 }),
      ]);
      // Since after the starts and finishes: none counted.
      expect(await d.readPools(T0 + 2, T0 + 2)).toEqual([
        expect.objectContaining({ name: POOL, retriedSince: 0, finishedSince: 0, waitedCount: 0, waitedSumMs: 0 }),
        expect.objectContaining({ name: "other" }),
      ]);
    });

    test("listWork pages from the highest id down, each page after the last id of the one before", async () => {
      const d = await driver(10);
      const rows = Array.from({ length: 7 }, (_, i) => row(T0 + i));
      await d.insertWork(rows);
      const ids = rows.map((r) => r.id).reverse();
      const pages: string[][] = [];
      let beforeId: string | null = null;
      for (;;) {
        const page = await d.listWork(POOL, query({ limit: 3, beforeId }));
        if (!page.length) break;
        pages.push(page.map((r) => r.id));
        beforeId = page[page.length - 1]!.id;
      }
      expect(pages).toEqual([ids.slice(0, 3), ids.slice(3, 6), ids.slice(6)]);
    });

    test("listWork narrows by each filter: state, handler, id, prefix of handler or name, key", async () => {
      const d = await driver(10);
      const w = await fixture(d);
      const list = async (q: Partial<WorkListQuery>) => (await d.listWork(POOL, query(q))).map((r) => r.id);
      const desc = (...works: NewWork[]) => works.map((x) => x.id).sort((a, b) => (a < b ? 1 : -1));
      expect(await list({})).toEqual(desc(...Object.values(w)));
      expect(await list({ state: "pending" })).toEqual(desc(w.due, w.later));
      expect(await list({ state: "retrying" })).toEqual(desc(w.retrying));
      expect(await list({ state: "running" })).toEqual(desc(w.running));
      expect(await list({ state: "finished" })).toEqual(desc(w.success, w.failed, w.canceled));
      expect(await list({ state: "success" })).toEqual(desc(w.success));
      expect(await list({ state: "failed" })).toEqual(desc(w.failed));
      expect(await list({ state: "canceled" })).toEqual(desc(w.canceled));
      expect(await list({ fnName: "charge" })).toEqual(desc(w.running, w.success));
      expect(await list({ id: w.later.id })).toEqual(desc(w.later));
      expect(await list({ prefix: "sen" })).toEqual(desc(w.failed, w.due, w.later));
      expect(await list({ key: "k1" })).toEqual(desc(w.due));
      expect(await list({ state: "failed", fnName: "charge" })).toEqual([]);
      const [failed] = await d.listWork(POOL, query({ id: w.failed.id }));
      expect(failed).toEqual({
        id: w.failed.id,
        pool: POOL,
        kind: "action",
        fnName: "report",
        name: "sendout",
        state: "finished",
        resultKind: "failed",
        attempt: 1,
        priority: 0,
        key: null,
        runAt: T0 - 8,
        enqueuedAt: T0,
        startedAt: T0,
        finishedAt: T0 + 1,
      });
    });

    test("readWorkDetail gives the row, its attempt log and its retry; of two racing retries, one is recorded", async () => {
      const d = await driver(10);
      const w = await fixture(d);
      expect(await d.readWorkDetail("no-such-id")).toBeNull();
      const detail = await d.readWorkDetail(w.failed.id);
      expect(detail).toMatchObject({ id: w.failed.id, state: "finished", result: FAILED, retriedAs: null });
      expect(JSON.parse(detail!.attemptLog!)).toEqual([{ attempt: 1, outcome: "failed" }]);
      const [a, b] = [everyColumn(1, T0 + 2), everyColumn(2, T0 + 2)];
      const done = await Promise.all([d.retryWork(w.failed.id, a), d.retryWork(w.failed.id, b)]);
      expect(done.filter(Boolean)).toHaveLength(1);
      const winner = done[0] ? a : b;
      expect((await d.readWorkDetail(w.failed.id))!.retriedAs).toBe(winner.id);
      expectEveryColumn((await d.readWork(POOL, [winner.id]))[0], winner, "the retry");
      expect(await d.readWork(POOL, [(done[0] ? b : a).id])).toEqual([]);
      // Only finished work is retried.
      expect(await d.retryWork(w.running.id, everyColumn(3, T0 + 2))).toBe(false);
    });
  });
}
