/**
 * step.map on every store: a sliding window of at most `concurrency` items in flight,
 * results in item order, the three onFailure modes, fail-fast ending the in-flight items'
 * steps and canceling their work (child runs and nested maps too), a run's cancel, fair
 * turns between tenants' maps, and bad input. Replay: workflow-map-replay.ts.
 */
import { describe, expect, test } from "vitest";
import { InvalidArgumentError, NonRetryableError, type Workpool, type WorkpoolOptions } from "../../src/index.js";
import { StepFailedError, WorkflowCanceledError, type WorkflowManager, type WorkflowStep } from "../../src/workflow/index.js";
import type { StoreHarness } from "./harness.js";
import { aborted, useTestContext, type TestContext } from "./context.js";
import { drain, workflowPool } from "./workflow-kit.js";

/** What the item actions of one test saw. */
interface Seen {
  ran: number[];
  live: number;
  peak: number;
}

/** An action "work" that doubles its item, counting how many run at once. */
function defineWork<Tx>(pool: Workpool<Tx>, seen: Seen) {
  return pool.defineAction("work", async (_c, i: number) => {
    seen.peak = Math.max(seen.peak, ++seen.live);
    seen.ran.push(i);
    // Let the other attempts of this claim start before this one ends.
    await new Promise((r) => setImmediate(r));
    seen.live--;
    return i * 2;
  });
}

/** A map flow: item 0 sleeps first (a slow item), the others run "work" at once; `fail` items fail. */
function defineFlow<Tx>(t: { pool: Workpool<Tx>; wf: WorkflowManager<Tx> }, seen: Seen, fail: number[] = []) {
  const work = defineWork(t.pool, seen);
  const boom = t.pool.defineAction("boom", (_c, i: number) => {
    seen.ran.push(i);
    throw new NonRetryableError(`item ${i} broke`);
  });
  return t.wf.define("flow", async (step, args: { n: number; concurrency: number; slow?: boolean }) => {
    const items = Array.from({ length: args.n }, (_, i) => i);
    return step.map(
      items,
      async (i) => {
        if (i === 0 && args.slow) await step.sleep(60_000);
        return fail.includes(i) ? step.runAction(boom, i) : step.runAction(work, i);
      },
      { concurrency: args.concurrency },
    );
  });
}

export function defineWorkflowMapTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("workflow map", () => {
    const ctx = useTestContext(harness);

    test("a sliding window: at most `concurrency` items in flight, a slow item holds back no other, results in item order", async () => {
      const t = await ctx();
      const p = workflowPool(t);
      const seen: Seen = { ran: [], live: 0, peak: 0 };
      const flow = defineFlow(p, seen);
      const id = await p.wf.start(flow, { n: 25, concurrency: 4, slow: true });
      await drain(p.pool);
      // Item 0 sleeps: the 24 others went through the 3 other places of the window meanwhile.
      expect([...seen.ran].sort((a, b) => a - b)).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
      expect(seen.peak).toBe(3);
      expect(await p.wf.status(id)).toMatchObject({ state: "running" });
      t.clock.advance(60_000);
      await drain(p.pool);
      expect(await p.wf.status(id)).toMatchObject({ state: "success", result: Array.from({ length: 25 }, (_, i) => i * 2) });
      expect(seen.ran.at(-1)).toBe(0);
      // Without a slow item the window fills: 4 at once, never more.
      const seen2: Seen = { ran: [], live: 0, peak: 0 };
      const q = workflowPool(t, { name: "second" });
      const flow2 = defineFlow(q, seen2);
      const id2 = await q.wf.start(flow2, { n: 30, concurrency: 4 });
      await drain(q.pool);
      expect(seen2.peak).toBe(4);
      expect(await q.wf.status(id2)).toMatchObject({ state: "success", result: Array.from({ length: 30 }, (_, i) => i * 2) });
      expect((await q.wf.steps(id2)).length).toBe(30);
    });

    test("fail-fast: the first failure ends the items in flight (signal aborted, work canceled), starts no more, and the run catches its error", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const signals = new Map<number, AbortSignal>();
      const ran: number[] = [];
      const hang = pool.defineAction("hang", async (c, i: number) => {
        ran.push(i);
        signals.set(i, c.signal);
        await aborted(c.signal);
        return "late result";
      });
      const boom = pool.defineAction("boom", (_c, i: number) => {
        ran.push(i);
        throw new Error(`item ${i} broke`);
      });
      const note = pool.defineAction("note", (_c, s: string) => s);
      const flow = wf.define("flow", async (step) => {
        let caught = "";
        try {
          await step.map([0, 1, 2, 3, 4, 5], (i) => (i === 1 ? step.runAction(boom, i) : step.runAction(hang, i)), { concurrency: 3 });
        } catch (e) {
          caught = e instanceof StepFailedError ? `${e.kind}: ${e.message}` : String(e);
        }
        return { caught, after: await step.runAction(note, "went on") };
      });
      const id = await wf.start(flow, null);
      await pool.runOnce(); // the advance: items 0, 1 and 2 start
      await pool.runOnce(); // item 1 fails while 0 and 2 run: they are aborted
      await drain(pool);
      expect(signals.get(0)!.aborted).toBe(true);
      expect(signals.get(2)!.aborted).toBe(true);
      expect(ran.sort()).toEqual([0, 1, 2]);
      expect(await wf.status(id)).toMatchObject({ state: "success", result: { caught: "failed: item 1 broke", after: "went on" } });
      const steps = await wf.steps(id);
      expect(steps.map((s) => [s.n, s.name, s.state, s.error])).toEqual([
        [0, "hang", "canceled", "canceled: item 1 of its step.map failed"],
        [1, "boom", "failed", "item 1 broke"],
        [2, "hang", "canceled", "canceled: item 1 of its step.map failed"],
        [3, "note", "success", undefined],
      ]);
      for (const n of [0, 2])
        expect(await pool.status(steps[n]!.workId!)).toMatchObject({ state: "finished", result: { kind: "canceled" } });
    });

    test('"collect" gives every item\'s outcome; "ignore" gives the values, undefined for failed items; neither cancels anything', async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const seen: Seen = { ran: [], live: 0, peak: 0 };
      const work = defineWork(pool, seen);
      const boom = pool.defineAction("boom", (_c, i: number) => {
        seen.ran.push(i);
        throw new Error(`item ${i} broke`);
      });
      const items = [0, 1, 2, 3, 4, 5, 6];
      const run = (step: WorkflowStep, i: number): Promise<number> => (i % 3 === 1 ? step.runAction(boom, i) : step.runAction(work, i));
      const flow = wf.define("flow", async (step) => {
        const collected = await step.map(items, (i) => run(step, i), { concurrency: 2, onFailure: "collect" });
        const ignored = await step.map(items, (i) => run(step, i), { concurrency: 3, onFailure: "ignore" });
        return {
          collected: collected.map((r) => (r.ok ? r.value : (r.error as Error).message)),
          ignored: ignored.map((v) => (v === undefined ? "undefined" : v)),
        };
      });
      const id = await wf.start(flow, null);
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({
        state: "success",
        result: {
          collected: [0, "item 1 broke", 4, 6, "item 4 broke", 10, 12],
          ignored: [0, "undefined", 4, 6, "undefined", 10, 12],
        },
      });
      expect(seen.ran.length).toBe(14);
      expect((await wf.steps(id)).filter((s) => s.state === "canceled")).toEqual([]);
    });

    test("fail-fast ends an in-flight item's child run and the items of a map nested in it", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const boom = pool.defineAction("boom", () => {
        throw new Error("broke");
      });
      const child = wf.define("child", async (step) => (await step.awaitEvent("never")).kind);
      const flow = wf.define("flow", async (step) => {
        const caught = await step
          .map([0, 1, 2], async (i) => {
            if (i === 0) return step.runWorkflow(child, null);
            if (i === 1) return step.map(["a", "b"], () => step.sleep(60_000));
            // Fails once the others wait.
            await step.sleep(1000);
            return step.runAction(boom, null);
          })
          .catch((e: unknown) => (e as Error).message);
        await step.awaitEvent("go");
        return caught;
      });
      const id = await wf.start(flow, null);
      await drain(pool);
      t.clock.advance(1000);
      await drain(pool);
      const steps = await wf.steps(id);
      expect(steps.map((s) => [s.n, s.kind, s.state])).toEqual([
        [0, "workflow", "canceled"],
        [1, "sleep", "canceled"],
        [2, "sleep", "canceled"],
        [3, "sleep", "success"],
        [4, "action", "failed"],
        [5, "event", "waiting"],
      ]);
      expect(steps[1]!.error).toBe("canceled: item 2 of its step.map failed");
      expect(await wf.status(steps[0]!.childId!)).toMatchObject({ state: "canceled", parentId: id });
      for (const n of [1, 2]) expect(await pool.status(steps[n]!.workId!)).toMatchObject({ result: { kind: "canceled" } });
      await wf.sendEvent(id, "go", null);
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({ state: "success", result: "broke" });
    });

    test("a run's cancel rejects a map with WorkflowCanceledError whatever its onFailure, and starts no more items", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const flow = wf.define("flow", async (step) => {
        try {
          await step.map([0, 1, 2, 3], () => step.sleep(60_000), { concurrency: 2, onFailure: "collect" });
        } catch (e) {
          if (e instanceof WorkflowCanceledError) await step.runAction(note, "unwound");
          throw e;
        }
      });
      const notes: string[] = [];
      const note = pool.defineAction("note", (_c, s: string) => void notes.push(s));
      const id = await wf.start(flow, null);
      await drain(pool);
      expect(await wf.cancel(id)).toBe(true);
      await drain(pool);
      expect(notes).toEqual(["unwound"]);
      expect(await wf.status(id)).toMatchObject({ state: "canceled" });
      expect((await wf.steps(id)).map((s) => [s.kind, s.state])).toEqual([
        ["sleep", "canceled"],
        ["sleep", "canceled"],
        ["action", "success"],
      ]);
    });

    /** Two tenants' runs map over 120 items each, every step keyed by its tenant: the first 8 starts after b's map queued its items, and how many of a's were queued then. */
    async function tenants(t: TestContext<Tx>, options: WorkpoolOptions): Promise<{ firstClaims: string[]; aQueued: number }> {
      const { pool, wf } = workflowPool(t, { maxParallelism: 4, ...options });
      const work = pool.defineAction("work", () => null);
      const flow = wf.define("flow", async (step, args: { tenant: string; n: number }) => {
        const items = Array.from({ length: args.n }, (_, i) => i);
        await step.map(items, (i) => step.runAction(work, i, { key: args.tenant }), { concurrency: 50 });
        return args.tenant;
      });
      const a = await wf.start(flow, { tenant: "a", n: 120 });
      await pool.runOnce(); // a's map: 50 items queued
      await pool.runOnce(); // some of them run
      const b = await wf.start(flow, { tenant: "b", n: 120 });
      while ((await wf.status(b)).steps === 0) await pool.runOnce(); // b's map: its first 50 items queued
      const starts: string[] = [];
      pool.on("started", (e) => {
        if (e.fnName === "work") starts.push(e.key!);
      });
      while (!starts.includes("b") || starts.length < 8) await pool.runOnce();
      const firstClaims = starts.slice(0, 8);
      const aQueued = (await wf.steps(a)).filter((s) => s.state === "running").length;
      await drain(pool, 2000);
      expect(await wf.status(a)).toMatchObject({ state: "success", result: "a" });
      expect(await wf.status(b)).toMatchObject({ state: "success", result: "b" });
      return { firstClaims, aQueued };
    }

    test("per-key limits and fair turns across keys keep one tenant's map from starving another's", async () => {
      for (const options of [{ keyParallelism: 2 }, {}]) {
        const t = await ctx();
        const { firstClaims, aQueued } = await tenants(t, options);
        // b's items start within the first 8 starts after its map began, while a's map still has many queued.
        expect(firstClaims.filter((k) => k === "b").length).toBeGreaterThanOrEqual(4);
        expect(aQueued).toBeGreaterThan(40);
      }
    }, 60_000);

    test("bad input rejects with an InvalidArgumentError naming the field, and writes nothing", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const work = pool.defineAction("work", () => null);
      const flow = wf.define("flow", async (step) => {
        const calls: [unknown, unknown, unknown][] = [
          ["not an array", (i: number) => step.runAction(work, i), undefined],
          [new Array(100_001).fill(0), (i: number) => step.runAction(work, i), undefined],
          [[1], "not a function", undefined],
          [[1], (i: number) => step.runAction(work, i), { concurrency: 0 }],
          [[1], (i: number) => step.runAction(work, i), { concurrency: 10_001 }],
          [[1], (i: number) => step.runAction(work, i), { concurrency: 1.5 }],
          [[1], (i: number) => step.runAction(work, i), { onFailure: "retry" }],
          [[1], (i: number) => step.runAction(work, i), { concurency: 2 }],
          [[1], (i: number) => step.runAction(work, i), "fast"],
        ];
        const errors: string[] = [];
        for (const [items, fn, options] of calls) {
          try {
            await (step.map as (a: unknown, b: unknown, c: unknown) => Promise<unknown>)(items, fn, options);
            errors.push("no error");
          } catch (e) {
            errors.push(e instanceof InvalidArgumentError ? e.field : `not an InvalidArgumentError: ${String(e)}`);
          }
        }
        return errors;
      });
      const id = await wf.start(flow, null);
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({
        state: "success",
        result: [
          "items",
          "items",
          "fn",
          "options.concurrency",
          "options.concurrency",
          "options.concurrency",
          "options.onFailure",
          "concurency",
          "options",
        ],
        steps: 0,
      });
    });

    test("an empty map resolves with no items; a map's values come back in item order whatever order the items end in", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const work = pool.defineAction("work", (_c, i: number) => i);
      const flow = wf.define("flow", async (step) => {
        const none = await step.map([], (i: number) => step.runAction(work, i));
        // Item i sleeps (5 - i) s: they end last to first.
        const values = await step.map([0, 1, 2, 3, 4], async (i) => {
          await step.sleep((5 - i) * 1000);
          return step.runAction(work, i);
        });
        return { none, values };
      });
      const id = await wf.start(flow, null);
      for (let s = 0; s < 6; s++) {
        await drain(pool);
        t.clock.advance(1000);
      }
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({ state: "success", result: { none: [], values: [0, 1, 2, 3, 4] } });
      const events = (await wf.steps(id)).filter((s) => s.kind === "action").map((s) => s.args);
      expect(events).toEqual([4, 3, 2, 1, 0]);
    });
  });
}
