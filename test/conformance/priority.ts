/**
 * Guarantee 9: due work of a pool runs lowest priority first, then earliest runAt, then
 * enqueue order; work waiting to retry keeps its priority.
 */
import { describe, expect, test } from "vitest";
import type { StoreHarness } from "./harness.js";
import { T0, useTestContext } from "./context.js";

export function definePriorityTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("priority", () => {
    const ctx = useTestContext(harness);

    test("due work runs lowest priority first, then earliest runAt, then enqueue order", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 1 });
      const ran: string[] = [];
      const job = pool.defineAction("job", (_c, name: string) => void ran.push(name));
      await pool.enqueueAction(job, "A0");
      await pool.enqueueAction(job, "B5", { priority: 5 });
      await pool.enqueueAction(job, "C-3", { priority: -3 });
      await pool.enqueueAction(job, "D0");
      await pool.enqueueAction(job, "E-3-later", { priority: -3, runAfter: 1000 });
      await pool.enqueueAction(job, "F0-earlier", { runAt: T0 - 500 });
      await pool.enqueueAction(job, "G1000", { priority: 1000 });
      await pool.enqueueAction(job, "H-1000", { priority: -1000 });
      for (let i = 0; i < 4; i++) expect((await pool.runOnce()).claimed).toBe(1);
      expect(ran).toEqual(["H-1000", "C-3", "F0-earlier", "A0"]);
      // Work that becomes due goes before everything of a higher priority still waiting.
      t.clock.advance(1000);
      while ((await pool.runOnce()).claimed > 0);
      expect(ran).toEqual(["H-1000", "C-3", "F0-earlier", "A0", "E-3-later", "D0", "B5", "G1000"]);
    });

    test("one claim of many rows takes them in priority order across priorities", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 3 });
      const started: number[] = [];
      pool.on("started", (e) => started.push(e.priority ?? 0));
      const job = pool.defineAction("job", () => undefined);
      await pool.enqueueActionBatch(job, [1, 2], { priority: 7 });
      await pool.enqueueActionBatch(job, [1, 2], { priority: 3 });
      await pool.enqueueActionBatch(job, [1, 2], { priority: -2 });
      expect((await pool.runOnce()).claimed).toBe(3);
      expect(started).toEqual([-2, -2, 3]);
    });

    test("work waiting to retry keeps its priority and runs before lower-priority work once due", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 1 });
      const ran: string[] = [];
      let failures = 0;
      const flaky = pool.defineAction("flaky", () => {
        ran.push("urgent");
        if (failures++ === 0) throw new Error("first try fails");
      });
      const job = pool.defineAction("job", (_c, name: string) => void ran.push(name));
      const urgent = await pool.enqueueAction(flaky, {}, { priority: -5, retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } });
      await pool.enqueueActionBatch(job, ["a", "b", "c"]);
      await pool.runOnce();
      expect(ran).toEqual(["urgent"]);
      // Waiting out its backoff: pending, with its priority, and not blocking others.
      expect(await pool.status(urgent)).toEqual({ state: "pending", previousAttempts: 1, priority: -5 });
      await pool.runOnce();
      expect(ran).toEqual(["urgent", "a"]);
      t.clock.advance(100);
      await pool.runOnce();
      await pool.runOnce();
      expect(ran).toEqual(["urgent", "a", "urgent", "b"]);
      expect(await pool.status(urgent)).toMatchObject({ state: "finished", result: { kind: "success" } });
    });

    test("status and events carry priority and key when they are set, and not otherwise", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 2 });
      const enqueued: unknown[] = [];
      const started: unknown[] = [];
      pool.on("enqueued", (e) => enqueued.push({ priority: e.priority, key: e.key }));
      pool.on("started", (e) => started.push({ priority: e.priority, key: e.key }));
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const job = pool.defineAction("job", () => gate);
      const plain = await pool.enqueueAction(job, {});
      const keyed = await pool.enqueueAction(job, {}, { priority: 9, key: "user:7" });
      expect(await pool.status(plain)).toEqual({ state: "pending", previousAttempts: 0 });
      expect(await pool.status(keyed)).toEqual({ state: "pending", previousAttempts: 0, priority: 9, key: "user:7" });
      const step = pool.runOnce();
      while (pool.running < 2) await new Promise((r) => setImmediate(r));
      expect(await pool.status(keyed)).toEqual({ state: "running", previousAttempts: 0, priority: 9, key: "user:7" });
      release();
      await step;
      expect(enqueued).toEqual([
        { priority: undefined, key: undefined },
        { priority: 9, key: "user:7" },
      ]);
      expect(started).toEqual([
        { priority: undefined, key: undefined },
        { priority: 9, key: "user:7" },
      ]);
      expect(await pool.status(keyed)).toEqual({ state: "finished", result: { kind: "success", returnValue: undefined } });
    });
  });
}
