/**
 * Batch actions: up to maxBatchSize claimed works of one handler run in one call, waiting
 * at most maxWaitMs to fill a batch; each work keeps its own attempt, retries, status,
 * onComplete and cancel, and holds its own slot of maxParallelism and of its key's limit.
 */
import { describe, expect, test } from "vitest";
import { InvalidArgumentError, NonRetryableError, type OnCompleteArgs, type WorkId, type Workpool } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { deferred, nextEvent, useTestContext } from "./context.js";
import { drain, workflowPool } from "./workflow-kit.js";

/** Resolves once `pool` has started `n` attempts (from now on). */
function started<Tx>(pool: Workpool<Tx>, n: number): Promise<void> {
  let seen = 0;
  return new Promise((resolve) => {
    const off = pool.on("started", () => {
      if (++seen === n) {
        off();
        resolve();
      }
    });
  });
}

/** Resolves once `done()` holds, checking after each turn of the event loop. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setImmediate(r));
}

export function defineBatchActionTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("batch actions", () => {
    const ctx = useTestContext(harness);

    test("a batch takes up to maxBatchSize works; each gets its own result and its own onComplete, once", async () => {
      const t = await ctx();
      const pool = t.pool();
      const calls: number[][] = [];
      const double = pool.defineBatchAction(
        "double",
        (_c, items: { workId: WorkId; args: { n: number }; attempt: number }[]) => {
          calls.push(items.map((i) => i.args.n));
          expect(items.every((i) => i.attempt === 1)).toBe(true);
          return items.map((i) => i.args.n * 2);
        },
        { maxBatchSize: 3 },
      );
      const seen: OnCompleteArgs<{ n: number }, number>[] = [];
      const done = pool.defineOnComplete<{ n: number }, number>("done", (_c, args) => {
        seen.push(args);
      });
      const ids: WorkId[] = [];
      for (let n = 1; n <= 7; n++) ids.push(await pool.enqueueAction(double, { n }, { onComplete: done, context: { n } }));
      expect((await pool.runOnce()).claimed).toBe(7);
      expect(calls.map((c) => c.length)).toEqual([3, 3, 1]);
      expect(calls.flat().sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      for (let n = 1; n <= 7; n++) {
        expect(await pool.status(ids[n - 1]!)).toMatchObject({ state: "finished", result: { kind: "success", returnValue: 2 * n } });
      }
      await pool.runOnce();
      expect(seen).toHaveLength(7);
      for (const s of seen)
        expect(s).toEqual({ workId: ids[s.context.n - 1], context: s.context, result: { kind: "success", returnValue: 2 * s.context.n } });
    });

    test("a started worker waits at most maxWaitMs (on the pool's clock) to fill a batch, and starts a full batch at once", async () => {
      const t = await ctx();
      const pool = t.pool();
      const calls: number[][] = [];
      const job = pool.defineBatchAction(
        "job",
        (_c, items: { args: number }[]) => {
          calls.push(items.map((i) => i.args));
          return items.map(() => null);
        },
        { maxBatchSize: 4, maxWaitMs: 1000 },
      );
      await pool.start();
      let claimed = started(pool, 2);
      await pool.enqueueActionBatch(job, [1, 2]);
      await claimed;
      // Claimed (running, each holding a slot) but waiting for more.
      expect((await t.driver.counts(pool.name, t.clock.now())).running).toBe(2);
      t.clock.advance(999);
      expect(calls).toEqual([]);
      claimed = started(pool, 2);
      await pool.enqueueActionBatch(job, [3, 4]);
      await claimed;
      // The fourth work filled the batch: it starts without waiting for the clock (once the
      // store confirmed none of them was canceled meanwhile).
      await until(() => calls.length === 1);
      expect(calls.map((c) => [...c].sort())).toEqual([[1, 2, 3, 4]]);
      claimed = started(pool, 1);
      const last = await pool.enqueueAction(job, 5);
      await claimed;
      t.clock.advance(999);
      expect(calls).toHaveLength(1);
      const finished = nextEvent(pool, "completed", (e) => e.workId === last);
      t.clock.advance(1);
      await finished;
      expect(calls[1]).toEqual([5]);
      await pool.stop();
      expect(await pool.status(last)).toEqual({ state: "finished", result: { kind: "success", returnValue: null } });
    });

    test("an Error in place of a result fails that item alone, retried by its own behaviour; a NonRetryableError is not retried", async () => {
      const t = await ctx();
      const pool = t.pool();
      const calls: { args: string; attempt: number }[][] = [];
      const job = pool.defineBatchAction("job", (_c, items: { args: string; attempt: number }[]) => {
        calls.push(items.map((i) => ({ args: i.args, attempt: i.attempt })));
        return items.map((i) => {
          if (i.args === "flaky" && i.attempt === 1) return new Error("try again");
          if (i.args === "bad") return new NonRetryableError("never");
          return `ok:${i.args}`;
        });
      });
      const retry = { maxAttempts: 3, initialBackoffMs: 1000, base: 2 };
      const [ok, flaky, bad] = await pool.enqueueActionBatch(job, ["ok", "flaky", "bad"], { retry });
      await pool.runOnce();
      expect(await pool.status(ok!)).toEqual({ state: "finished", result: { kind: "success", returnValue: "ok:ok" } });
      expect(await pool.status(flaky!)).toEqual({ state: "pending", previousAttempts: 1 });
      expect(await pool.status(bad!)).toEqual({ state: "finished", result: { kind: "failed", error: "never" } });
      t.clock.advance(1000);
      await pool.runOnce();
      expect(calls[1]).toEqual([{ args: "flaky", attempt: 2 }]);
      expect(await pool.status(flaky!)).toEqual({ state: "finished", result: { kind: "success", returnValue: "ok:flaky" } });
    });

    test("a handler that throws fails every item of its batch, each retried on its own", async () => {
      const t = await ctx();
      const pool = t.pool();
      let calls = 0;
      const job = pool.defineBatchAction("job", (_c, items: { args: number }[]) => {
        if (++calls === 1) throw new Error("service down");
        return items.map((i) => i.args);
      });
      const ids = await pool.enqueueActionBatch(job, [1, 2, 3], { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } });
      const once = await pool.enqueueAction(job, 4, { retry: false });
      await pool.runOnce();
      for (const id of ids) expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 1 });
      expect(await pool.status(once)).toEqual({ state: "finished", result: { kind: "failed", error: "service down" } });
      t.clock.advance(100);
      await pool.runOnce();
      expect(calls).toBe(2);
      for (const [i, id] of ids.entries()) {
        expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: i + 1 } });
      }
    });

    test("an item canceled mid-batch finishes canceled at once; its signal aborts, the batch goes on and its result is dropped", async () => {
      const t = await ctx();
      const pool = t.pool();
      const gate = deferred();
      const called = deferred();
      const signals: { item: boolean; batch: boolean }[] = [];
      const job = pool.defineBatchAction("job", async (c, items: { args: number; signal: AbortSignal }[]) => {
        called.resolve();
        await gate.promise;
        for (const i of items) signals.push({ item: i.signal.aborted, batch: c.signal.aborted });
        return items.map((i) => i.args * 10);
      });
      const seen: OnCompleteArgs<unknown, number>[] = [];
      const done = pool.defineOnComplete<unknown, number>("done", (_c, args) => {
        seen.push(args);
      });
      const [a, b, c] = await pool.enqueueActionBatch(job, [1, 2, 3], { onComplete: done, retry: true });
      const step = pool.runOnce();
      await called.promise;
      const canceled = nextEvent(pool, "completed", (e) => e.workId === b);
      await pool.cancel(b!);
      await canceled;
      expect(await pool.status(b!)).toMatchObject({ state: "finished", result: { kind: "canceled" } });
      gate.resolve();
      await step;
      await pool.runOnce();
      expect(signals).toEqual([
        { item: false, batch: false },
        { item: true, batch: false },
        { item: false, batch: false },
      ]);
      expect(await pool.status(a!)).toMatchObject({ state: "finished", result: { kind: "success", returnValue: 10 } });
      expect(await pool.status(c!)).toMatchObject({ state: "finished", result: { kind: "success", returnValue: 30 } });
      expect(seen.map((s) => [s.workId, s.result.kind]).sort()).toEqual(
        [
          [a, "success"],
          [b, "canceled"],
          [c, "success"],
        ].sort(),
      );
      t.clock.advance(3_600_000);
      expect((await pool.runOnce()).claimed).toBe(0);
    });

    test("each item holds one slot: a batch never takes more works than maxParallelism or a key's limit allows", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 4, keyParallelism: 1 });
      const gate = deferred();
      const batches: string[][] = [];
      const job = pool.defineBatchAction(
        "job",
        async (_c, items: { args: string }[]) => {
          batches.push(items.map((i) => i.args));
          await gate.promise;
          return items.map(() => 1);
        },
        { maxBatchSize: 10 },
      );
      await pool.enqueueActionBatch(job, ["a1", "a2", "a3"], { key: "a" });
      await pool.enqueueActionBatch(job, ["b1", "b2"], { key: "b" });
      await pool.enqueueActionBatch(job, ["x1", "x2", "x3", "x4"]);
      const step = pool.runOnce();
      while (batches.length < 1) await new Promise((r) => setImmediate(r));
      const counts = await t.driver.counts(pool.name, t.clock.now());
      expect(counts.running).toBe(4);
      expect(counts.pending).toBe(5);
      expect(pool.running).toBe(4);
      const first = batches[0]!;
      expect(first).toHaveLength(4);
      expect(first.filter((x) => x.startsWith("a"))).toHaveLength(1);
      expect(first.filter((x) => x.startsWith("b"))).toHaveLength(1);
      gate.resolve();
      expect((await step).claimed).toBe(4);
      while ((await t.driver.counts(pool.name, t.clock.now())).pending > 0) {
        expect((await pool.runOnce()).claimed).toBeLessThanOrEqual(4);
      }
      for (const b of batches) {
        expect(b.length).toBeLessThanOrEqual(4);
        expect(b.filter((x) => x.startsWith("a")).length).toBeLessThanOrEqual(1);
        expect(b.filter((x) => x.startsWith("b")).length).toBeLessThanOrEqual(1);
      }
      expect(batches.flat().sort()).toEqual(["a1", "a2", "a3", "b1", "b2", "x1", "x2", "x3", "x4"]);
    });

    test("a work canceled by another process while it waits for its batch is never handed to the handler", async () => {
      const t = await ctx();
      const worker = t.pool();
      const other = t.pool();
      const seen: string[] = [];
      const job = worker.defineBatchAction(
        "job",
        (_c, items: { workId: string }[]) => {
          for (const i of items) seen.push(i.workId);
          return items.map(() => 1);
        },
        { maxBatchSize: 5, maxWaitMs: 1000 },
      );
      await worker.start();
      const claimed = started(worker, 2);
      const [a, b] = await worker.enqueueActionBatch(job, [1, 2]);
      await claimed;
      // Running (claimed by the worker): the cancel is recorded, and reaches the worker only through the store.
      expect(await other.cancel(a!)).toBe(true);
      const done = Promise.all([a, b].map((id) => nextEvent(worker, "completed", (e) => e.workId === id)));
      t.clock.advance(1000);
      await done;
      expect(seen).toEqual([b]);
      expect(await worker.status(a!)).toMatchObject({ state: "finished", result: { kind: "canceled" } });
      expect(await worker.status(b!)).toEqual({ state: "finished", result: { kind: "success", returnValue: 1 } });
    });

    test("a workflow's parallel steps of one batch action run in one batch", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const sizes: number[] = [];
      const square = pool.defineBatchAction("square", (_c, items: { args: number }[]) => {
        sizes.push(items.length);
        return items.map((i) => i.args * i.args);
      });
      const flow = wf.define("flow", async (step, args: number[]) => Promise.all(args.map((n) => step.runAction(square, n))));
      const id = await wf.start(flow, [1, 2, 3]);
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({ state: "success", result: [1, 4, 9] });
      expect(sizes).toEqual([3]);
    });

    test("stop({ timeoutMs: 0 }) hands works waiting for their batch back unstarted", async () => {
      const t = await ctx();
      const pool = t.pool();
      let calls = 0;
      const job = pool.defineBatchAction(
        "job",
        (_c, items: unknown[]) => {
          calls++;
          return items.map(() => 1);
        },
        { maxBatchSize: 10, maxWaitMs: 5000 },
      );
      await pool.start();
      const claimed = started(pool, 2);
      const ids = await pool.enqueueActionBatch(job, [1, 2]);
      await claimed;
      await pool.stop({ timeoutMs: 0 });
      expect(calls).toBe(0);
      for (const id of ids) expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 0 });
      await pool.runOnce();
      expect(calls).toBe(1);
      for (const id of ids) expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: 1 } });
    });

    test("bad options are refused with the field and its range, and define nothing", async () => {
      const t = await ctx();
      const pool = t.pool();
      const fn = (_c: unknown, items: unknown[]): number[] => items.map(() => 1);
      const bad: [unknown, RegExp][] = [
        [{ maxBatchSize: 0 }, /maxBatchSize: must be an integer from 1 to 1000, got 0/],
        [{ maxBatchSize: 1e9 }, /maxBatchSize: must be an integer from 1 to 1000, got 1000000000/],
        [{ maxBatchSize: 2.5 }, /maxBatchSize: must be an integer from 1 to 1000/],
        [{ maxWaitMs: -1 }, /maxWaitMs: must be an integer from 0 to 60000, got -1/],
        [{ maxWaitMs: 60_001 }, /maxWaitMs: must be an integer from 0 to 60000/],
        [{ maxWaitMs: Number.NaN }, /maxWaitMs: must be an integer from 0 to 60000/],
        [{ maxBatch: 5 }, /maxBatch: is not an option of defineBatchAction\(\); allowed: maxBatchSize, maxWaitMs/],
        [null, /options: must be an object of options for defineBatchAction\(\)/],
      ];
      for (const [options, message] of bad) {
        expect(() => pool.defineBatchAction("job", fn, options as never)).toThrow(InvalidArgumentError);
        expect(() => pool.defineBatchAction("job", fn, options as never)).toThrow(message);
      }
      expect(() => pool.defineBatchAction("job", "not a function" as never)).toThrow(/defineBatchAction\(handler\): must be a function/);
      // Nothing was registered: the name is still free.
      const job = pool.defineBatchAction("job", fn, { maxBatchSize: 1000, maxWaitMs: 60_000 });
      expect(() => pool.defineAction("job", () => 1)).toThrow(/"job" is already defined/);
      expect(job).toMatchObject({ kind: "action", name: "job" });
    });

    test("a wrong number of results, or no array, fails every item of the batch with a BatchResultError, not retried", async () => {
      const t = await ctx();
      const pool = t.pool();
      const short = pool.defineBatchAction("short", (_c, items: unknown[]) => items.slice(1).map(() => 1));
      const notArray = pool.defineBatchAction("notArray", () => ({ results: [] }) as never);
      const shortIds = await pool.enqueueActionBatch(short, [1, 2, 3], { retry: true });
      const objIds = await pool.enqueueActionBatch(notArray, [1, 2], { retry: true });
      await pool.runOnce();
      for (const id of shortIds) {
        expect(await pool.status(id)).toEqual({
          state: "finished",
          result: {
            kind: "failed",
            error:
              'batch action "short" returned 2 results for 3 items; it must return an array of one result (or Error) per item, in order',
          },
        });
      }
      for (const id of objIds) {
        expect(await pool.status(id)).toMatchObject({
          state: "finished",
          result: {
            kind: "failed",
            error: expect.stringMatching(/^batch action "notArray" returned an object that is not an array for 2 items/) as unknown,
          },
        });
      }
    });

    test("a result that is not JSON fails its own item, not retried; the others of the batch succeed", async () => {
      const t = await ctx();
      const pool = t.pool();
      const job = pool.defineBatchAction("job", (_c, items: { args: number }[]) =>
        items.map((i) => (i.args === 2 ? (10n as unknown as number) : i.args)),
      );
      const [one, two, three] = await pool.enqueueActionBatch(job, [1, 2, 3], { retry: true });
      await pool.runOnce();
      expect(await pool.status(one!)).toEqual({ state: "finished", result: { kind: "success", returnValue: 1 } });
      expect(await pool.status(two!)).toMatchObject({
        state: "finished",
        result: { kind: "failed", error: expect.stringMatching(/^the batch action's returnValue/) as unknown },
      });
      expect(await pool.status(three!)).toEqual({ state: "finished", result: { kind: "success", returnValue: 3 } });
    });

    test("each item keeps its own timeout: a timed-out item fails (and retries) while the batch goes on", async () => {
      const t = await ctx();
      const pool = t.pool();
      const gate = deferred();
      const called = deferred();
      const job = pool.defineBatchAction("job", async (_c, items: { args: number }[]) => {
        called.resolve();
        await gate.promise;
        return items.map((i) => i.args);
      });
      const slow = await pool.enqueueAction(job, 1, { timeoutMs: 500, retry: { maxAttempts: 2, initialBackoffMs: 10, base: 2 } });
      const fine = await pool.enqueueAction(job, 2);
      const step = pool.runOnce();
      // Its timeout runs from when its batch starts.
      await called.promise;
      const timedOut = nextEvent(pool, "completed", (e) => e.workId === slow);
      t.clock.advance(500);
      await timedOut;
      expect(await pool.status(slow)).toEqual({ state: "pending", previousAttempts: 1 });
      gate.resolve();
      await step;
      expect(await pool.status(fine)).toEqual({ state: "finished", result: { kind: "success", returnValue: 2 } });
    });
  });
}
