/**
 * store.close() with pools still running on it: it waits for a stop() in flight, and
 * stops a pool left running as stop({ timeoutMs: 0 }) does, so no attempt is left
 * `running` until its lease expires and nothing calls the closed store afterwards.
 */
import { describe, expect, test } from "vitest";
import type { StoreHarness } from "./harness.js";
import { aborted, deferred, nextEvent, useTestContext } from "./context.js";

export function defineCloseTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("store.close() with running pools", () => {
    const ctx = useTestContext(harness);

    test("close() waits for a stop() that was not awaited; the running attempt finishes and its result is written", async () => {
      const t = await ctx();
      const store = harness.openAnotherStore(t.h);
      const pool = t.pool({}, store);
      const finish = deferred();
      const job = pool.defineAction("job", async () => {
        await finish.promise;
        return "done";
      });
      await pool.start();
      const started = nextEvent(pool, "started");
      const id = await pool.enqueueAction(job, {});
      await started;
      void pool.stop();
      const closed = store.close();
      finish.resolve();
      await closed;
      expect(await t.driver.readWork(pool.name, [id])).toMatchObject([
        { state: "finished", result: JSON.stringify({ kind: "success", returnValue: "done" }) },
      ]);
      expect(t.logger.lines.filter((l) => l.level === "error")).toEqual([]);
    });

    test("close() of a store with a pool still running stops it first: the running attempt is handed back, not left running", async () => {
      const t = await ctx();
      const store = harness.openAnotherStore(t.h);
      const pool = t.pool({}, store);
      const signals: AbortSignal[] = [];
      const job = pool.defineAction("job", async (c) => {
        signals.push(c.signal);
        await aborted(c.signal);
      });
      await pool.start();
      const started = nextEvent(pool, "started");
      const id = await pool.enqueueAction(job, {});
      await started;
      await store.close();
      expect(signals[0]!.aborted).toBe(true);
      expect(await t.driver.readWork(pool.name, [id])).toMatchObject([{ state: "pending", attempt: 0, workerId: null }]);
      expect(t.logger.lines.filter((l) => l.level === "error")).toEqual([]);
      expect(t.logger.matching("handed 1 running attempt(s)")).toHaveLength(1);
      // The pool is stopped: it can be started again on a live store, and nothing is left running.
      expect(pool.running).toBe(0);
    });
  });
}
