/**
 * Child runs (step.runWorkflow) on every store: a child has its own journal, a parent's
 * cancel cascades to its children and theirs, and a child's failure is an error the parent
 * catches and goes on from.
 */
import { describe, expect, test } from "vitest";
import { StepFailedError } from "../../src/workflow/index.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext } from "./context.js";
import { drain, workflowPool } from "./workflow-kit.js";

export function defineWorkflowChildTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("workflows: child runs", () => {
    const ctx = useTestContext(harness);

    test("a child run has its own journal; the parent's entry names it", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const double = pool.defineAction("double", (_c, n: number) => n * 2);
      const child = wf.define("child", async (step, n: number) => {
        const a = await step.runAction(double, n);
        return step.runAction(double, a);
      });
      const parent = wf.define("parent", async (step) => {
        const before = step.now();
        return { result: await step.runWorkflow(child, 5), before };
      });
      const id = await wf.start(parent, null);
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({ state: "success", result: { result: 20 }, steps: 2 });
      const steps = await wf.steps(id);
      expect(steps.map((s) => [s.n, s.kind, s.name, s.state, s.args, s.result])).toEqual([
        [0, "now", "now", "success", undefined, t.clock.now()],
        [1, "workflow", "child", "success", 5, 20],
      ]);
      const childId = steps[1]!.childId!;
      expect(await wf.status(childId)).toMatchObject({ state: "success", result: 20, steps: 2, parentId: id });
      expect((await wf.steps(childId)).map((s) => [s.n, s.kind, s.name, s.args, s.result])).toEqual([
        [0, "action", "double", 5, 10],
        [1, "action", "double", 10, 20],
      ]);
    });

    test("a parent's cancel cascades to its children and grandchildren", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const grandchild = wf.define("grandchild", async (step) => (await step.awaitEvent("never")).kind);
      const child = wf.define("child", async (step) => step.runWorkflow(grandchild, null));
      const parent = wf.define("parent", async (step) => Promise.all([step.runWorkflow(child, null), step.runWorkflow(child, null)]));
      const id = await wf.start(parent, null);
      await drain(pool);
      const children = (await wf.steps(id)).map((s) => s.childId!);
      const grandchildren = await Promise.all(children.map(async (c) => (await wf.steps(c))[0]!.childId!));
      for (const g of grandchildren) expect(await wf.status(g)).toMatchObject({ state: "running" });
      expect(await wf.cancel(id)).toBe(true);
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({ state: "canceled" });
      for (const c of children) expect(await wf.status(c)).toMatchObject({ state: "canceled", parentId: id });
      for (const [i, g] of grandchildren.entries()) {
        expect(await wf.status(g)).toMatchObject({ state: "canceled", parentId: children[i] });
        expect((await wf.steps(g)).map((s) => [s.kind, s.state])).toEqual([["event", "canceled"]]);
      }
    });

    test("a child's failure rejects the parent's await with a StepFailedError; the parent catches it and goes on", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const note = pool.defineAction("note", (_c, s: string) => s);
      const child = wf.define("child", async (step) => {
        await step.runAction(note, "child step");
        throw new Error("child broke");
      });
      const parent = wf.define("parent", async (step) => {
        let caught = "";
        try {
          await step.runWorkflow(child, null);
        } catch (e) {
          caught = e instanceof StepFailedError ? `${e.kind} at step ${e.step}: ${e.message}` : "not a StepFailedError";
        }
        return { caught, after: await step.runAction(note, "after the child") };
      });
      const id = await wf.start(parent, null);
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({
        state: "success",
        result: { caught: "failed at step 0: the child workflow failed: child broke", after: "after the child" },
      });
      const steps = await wf.steps(id);
      expect(steps.map((s) => [s.kind, s.state])).toEqual([
        ["workflow", "failed"],
        ["action", "success"],
      ]);
      expect(await wf.status(steps[0]!.childId!)).toMatchObject({ state: "failed", error: "child broke", parentId: id });
    });
  });
}
