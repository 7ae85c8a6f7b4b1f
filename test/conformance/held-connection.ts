/**
 * A mutation or onComplete handler that is still running after its turn of the event loop
 * holds a SQLite store's one connection (and the file's write lock) meanwhile: the pool
 * says so once per handler, as a process warning (docs/sqlite.md). PostgreSQL runs each
 * transaction on a connection of its own and says nothing.
 */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { HELD_CONNECTION_WARNING } from "../../src/handlers.js";
import type { StoreHarness } from "./harness.js";
import { deferred, useTestContext } from "./context.js";

/** Resolves after the immediates already queued have run (and the process warnings they emitted). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export function defineHeldConnectionTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("handlers that await past their turn", () => {
    const ctx = useTestContext(harness);
    const warned: string[] = [];
    const listener = (w: Error & { code?: string }): void => {
      if (w.code === HELD_CONNECTION_WARNING) warned.push(w.message);
    };
    // Each held call waits for the test to release it; once a test ended (maybe failed), none waits.
    const calls: { release: () => void }[] = [];
    let ended = false;
    beforeEach(() => {
      ended = false;
    });
    afterEach(() => {
      ended = true;
      for (const c of calls.splice(0)) c.release();
      process.off("warning", listener);
      warned.length = 0;
    });
    const holdsConnection = harness.name === "sqlite";

    test("an onComplete and a mutation that await a timer or I/O are warned about once per handler on SQLite", async () => {
      const t = await ctx();
      process.on("warning", listener);
      const pool = t.pool();
      // `entered` says a call is waiting.
      let entered = deferred();
      const hold = async (): Promise<void> => {
        if (ended) return;
        const gate = deferred();
        calls.push({ release: () => gate.resolve() });
        entered.resolve();
        await gate.promise;
      };
      const slowDone = pool.defineOnComplete("slowDone", hold);
      const slowWrite = pool.defineMutation("slowWrite", hold);
      const ok = pool.defineAction("ok", () => 1);
      const [first, second] = await pool.enqueueActionBatch(ok, [{}, {}], { onComplete: slowDone });

      const run = pool.runOnce();
      await entered.promise;
      await nextTurn();
      const expected = holdsConnection ? [expect.stringContaining('the onComplete handler "slowDone" of pool "default"')] : [];
      expect(warned).toEqual(expected);
      // The second delivery of the same handler waits as long, and is not warned about again.
      entered = deferred();
      calls[0]!.release();
      await entered.promise;
      await nextTurn();
      expect(warned).toEqual(expected);
      calls[1]!.release();
      await run;
      for (const id of [first!, second!]) expect(await pool.status(id)).toMatchObject({ onComplete: { state: "done" } });

      entered = deferred();
      const mutation = await pool.enqueueMutation(slowWrite, {});
      const run2 = pool.runOnce();
      await entered.promise;
      await nextTurn();
      expect(warned.slice(expected.length)).toEqual(holdsConnection ? [expect.stringContaining('the mutation handler "slowWrite"')] : []);
      calls[2]!.release();
      await run2;
      expect(await pool.status(mutation)).toMatchObject({ state: "finished", result: { kind: "success" } });
    });

    test("synchronous handlers, and async ones that only await the store, are not warned about", async () => {
      const t = await ctx();
      process.on("warning", listener);
      await harness.createAppTable(t.h);
      const pool = t.pool();
      const syncDone = pool.defineOnComplete("syncDone", (c, { workId }) => void harness.insertAppRow(c.tx, `done:${workId}`));
      const asyncDone = pool.defineOnComplete("asyncDone", async (c, { workId }) => {
        await harness.insertAppRow(c.tx, `async:${workId}`);
      });
      const write = pool.defineMutation("write", async (c, args: { k: string }) => {
        await harness.insertAppRow(c.tx, args.k);
      });
      const ok = pool.defineAction("ok", () => 1);
      await pool.enqueueAction(ok, {}, { onComplete: syncDone });
      await pool.enqueueAction(ok, {}, { onComplete: asyncDone });
      await pool.enqueueMutation(write, { k: "m" });
      await pool.runOnce();
      await nextTurn();
      expect(await harness.countAppRows(t.h)).toBe(3);
      expect(warned).toEqual([]);
    });
  });
}
