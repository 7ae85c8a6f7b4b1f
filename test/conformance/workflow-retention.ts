/**
 * Retention of finished workflow runs on every store: runs finished `retentionMs` ago are
 * deleted with their journals and events by the maintenance pass, in bounded pages; newer
 * runs, unfinished runs, runs whose onComplete is pending and runs whose parent is still
 * running are kept.
 */
import { describe, expect, test } from "vitest";
import type { StoreHarness } from "./harness.js";
import { useTestContext } from "./context.js";
import { drain, workflowPool } from "./workflow-kit.js";

export function defineWorkflowRetentionTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("workflows: retention", () => {
    const ctx = useTestContext(harness);

    test("finished runs past retentionMs are deleted with their steps and events; what still needs a run keeps it", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t, { retentionMs: 10_000 });
      let failOnComplete = true;
      const onDone = pool.defineMutation("onDone", () => {
        if (failOnComplete) throw new Error("not yet");
      });
      const quick = wf.define("quick", async (step) => step.awaitEvent<string>("go"));
      const child = wf.define("child", async () => "child");
      const parent = wf.define("parent", async (step) => {
        await step.runWorkflow(child, null);
        await step.sleep(3_600_000);
      });
      const waiter = wf.define("waiter", async (step) => step.awaitEvent("never"));
      const old = await wf.start(quick, null);
      await wf.sendEvent(old, "go", "first");
      await wf.sendEvent(old, "go", "left over");
      const parentId = await wf.start(parent, null);
      const waiting = await wf.start(waiter, null);
      const withOnComplete = await wf.start(quick, null, { onComplete: onDone });
      await wf.sendEvent(withOnComplete, "go", "x");
      await drain(pool);
      const childId = (await wf.steps(parentId))[0]!.childId!;
      expect(await wf.status(childId)).toMatchObject({ state: "success" });
      expect(await wf.status(withOnComplete)).toMatchObject({ state: "success" });

      t.clock.advance(5_000);
      const fresh = await wf.start(quick, null);
      await wf.sendEvent(fresh, "go", "y");
      await drain(pool);
      t.clock.advance(5_000);
      const r = await pool.runOnce();
      expect(r.deletedRuns).toBe(1);
      await expect(wf.status(old)).rejects.toThrow(/no workflow run/);
      const ops = t.driver.workflows();
      expect(await ops.readSteps(old)).toEqual([]);
      expect(await ops.takeEvent(old, "go", 9)).toBeNull();
      expect(await wf.status(fresh)).toMatchObject({ state: "success" });
      expect(await wf.status(childId)).toMatchObject({ state: "success" }); // its parent is still running
      expect(await wf.status(withOnComplete)).toMatchObject({ state: "success" }); // its onComplete is pending
      expect(await wf.status(parentId)).toMatchObject({ state: "running" });
      expect(await wf.status(waiting)).toMatchObject({ state: "running" });

      failOnComplete = false;
      t.clock.advance(3_600_000);
      await drain(pool);
      expect(await wf.status(parentId)).toMatchObject({ state: "success" });
      t.clock.advance(10_000);
      await pool.runOnce();
      for (const id of [parentId, childId, withOnComplete, fresh]) await expect(wf.status(id)).rejects.toThrow(/no workflow run/);
      expect(await wf.status(waiting)).toMatchObject({ state: "running" });
    });

    test("the store deletes finished runs a bounded page at a time, oldest first, only of its pool", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t, { retentionMs: 1_000 });
      const done = wf.define("done", async () => 1);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(await wf.start(done, null));
        await drain(pool);
        t.clock.advance(10);
      }
      const ops = t.driver.workflows();
      const now = t.clock.now();
      expect(await ops.deleteFinishedRuns("another pool", now, 2)).toBe(0);
      expect(await ops.deleteFinishedRuns(pool.name, now, 2)).toBe(2);
      await expect(wf.status(ids[1]!)).rejects.toThrow(/no workflow run/);
      expect(await wf.status(ids[2]!)).toMatchObject({ state: "success" });
      expect(await ops.deleteFinishedRuns(pool.name, now, 2)).toBe(2);
      expect(await ops.deleteFinishedRuns(pool.name, now, 2)).toBe(1);
      expect(await ops.deleteFinishedRuns(pool.name, now, 2)).toBe(0);
      for (const id of ids) await expect(wf.status(id)).rejects.toThrow(/no workflow run/);
    });
  });
}
