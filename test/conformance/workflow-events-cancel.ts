/**
 * Workflow guarantees 19 and 20 on every store: events sent before the wait are kept and
 * each is taken by one awaitEvent, waits time out; cancel fences late results, cancels
 * pending steps, aborts running actions, cascades to child runs, lets `finally` run a
 * clean-up step, and delivers onComplete `canceled` once; a run's onComplete runs once,
 * in the transaction that finishes it.
 */
import { describe, expect, test } from "vitest";
import { StepFailedError, WorkflowCanceledError, type WorkflowOnCompleteArgs } from "../../src/workflow/index.js";
import type { StoreHarness } from "./harness.js";
import { aborted, nextEvent, useTestContext } from "./context.js";
import { drain, workflowPool } from "./workflow-kit.js";

export function defineWorkflowEventCancelTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("workflows: events, cancel, children, onComplete", () => {
    const ctx = useTestContext(harness);

    test("an event sent before the wait is kept; each event is taken by one awaitEvent, in order; a wait times out", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const flow = wf.define("flow", async (step) => {
        const a = await step.awaitEvent<number>("n");
        const b = await step.awaitEvent<number>("n");
        const c = await step.awaitEvent<number>("n", { timeoutMs: 5000 });
        return [a, b, c];
      });
      const id = await wf.start(flow, null);
      await wf.sendEvent(id, "n", 1);
      await drain(pool);
      await wf.sendEvent(id, "n", 2);
      await drain(pool);
      expect((await wf.status(id)).state).toBe("running");
      t.clock.advance(5000);
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({
        state: "success",
        result: [{ kind: "event", value: 1 }, { kind: "event", value: 2 }, { kind: "timeout" }],
      });
      // A finished run refuses events; an unknown run is unknown.
      await expect(wf.sendEvent(id, "n", 3)).rejects.toThrow(/has finished \(success\)/);
      await expect(wf.sendEvent("no-such-run", "n", 3)).rejects.toThrow(/no workflow run/);
    });

    test("cancel: a running action is aborted, pending steps and child runs are canceled, finally runs a clean-up step, onComplete gets canceled once", async () => {
      const t = await ctx();
      await harness.createAppTable(t.h);
      const { pool, wf } = workflowPool(t);
      const signals: AbortSignal[] = [];
      const long = pool.defineAction("long", async (c) => {
        signals.push(c.signal);
        await aborted(c.signal);
        return "late result";
      });
      const cleanup = pool.defineMutation("cleanup", async (c) => void (await harness.insertAppRow(c.tx, "cleaned")));
      const done: WorkflowOnCompleteArgs<{ order: number }>[] = [];
      const onDone = pool.defineMutation("onDone", (_c, args: WorkflowOnCompleteArgs<{ order: number }>) => void done.push(args));
      const child = wf.define("child", async (step) => {
        await step.awaitEvent("never");
        return "child finished";
      });
      let seen: unknown = null;
      const parent = wf.define("parent", async (step) => {
        try {
          await Promise.all([step.runAction(long, null), step.runWorkflow(child, null), step.sleep(3_600_000)]);
        } catch (e) {
          seen = e;
          throw e;
        } finally {
          await step.runMutation(cleanup, null);
        }
      });
      const id = await wf.start(parent, null, { onComplete: onDone, context: { order: 7 } });
      await pool.runOnce(); // the advance enqueues the three steps
      const started = nextEvent(pool, "started", (e) => e.fnName === "long");
      const running = pool.runOnce();
      await started;
      expect(await wf.cancel(id)).toBe(true);
      expect(await wf.cancel(id)).toBe(false);
      await running;
      await drain(pool);
      expect(signals[0]!.aborted).toBe(true);
      expect(seen).toBeInstanceOf(WorkflowCanceledError);
      expect(await harness.countAppRows(t.h)).toBe(1);
      expect(await wf.status(id)).toMatchObject({ state: "canceled", cancelRequested: false });
      expect(done).toEqual([{ workflowId: id, context: { order: 7 }, result: { kind: "canceled" } }]);
      const steps = await wf.steps(id);
      expect(steps.map((s) => [s.kind, s.state])).toEqual([
        ["action", "canceled"],
        ["workflow", "canceled"],
        ["sleep", "canceled"],
        ["mutation", "success"],
      ]);
      expect(await wf.status(steps[1]!.childId!)).toMatchObject({ state: "canceled", parentId: id });
      // The action's late result was not journaled.
      expect(steps[0]!.result).toBeUndefined();
    });

    test("a child run's result returns to its parent; its failure is an error the parent can catch", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const child = wf.define("child", async (_step, n: number) => {
        if (n < 0) throw new Error(`negative: ${n}`);
        return n * 2;
      });
      const parent = wf.define("parent", async (step) => {
        const ok = await step.runWorkflow(child, 21);
        let caught = "";
        try {
          await step.runWorkflow(child, -1);
        } catch (e) {
          caught = e instanceof StepFailedError ? e.message : "not a StepFailedError";
        }
        return { ok, caught };
      });
      const id = await wf.start(parent, null);
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({
        state: "success",
        result: { ok: 42, caught: "the child workflow failed: negative: -1" },
      });
    });

    test("a run's onComplete runs once, in the transaction that finishes the run; if it throws it is tried again, never twice", async () => {
      const t = await ctx();
      await harness.createAppTable(t.h);
      const { pool, wf } = workflowPool(t);
      let tries = 0;
      const onDone = pool.defineMutation("onDone", async (c, args: WorkflowOnCompleteArgs) => {
        const mine = ++tries;
        await harness.insertAppRow(c.tx, `${args.workflowId}:${args.result.kind}`);
        if (mine === 1) throw new Error("first try fails");
      });
      const flow = wf.define("flow", async (_step, fail: boolean) => {
        if (fail) throw "plain text";
        return "ok";
      });
      const ok = await wf.start(flow, false, { onComplete: onDone });
      const failed = await wf.start(flow, true, { onComplete: onDone });
      await drain(pool);
      t.clock.advance(10_000);
      await drain(pool);
      expect(tries).toBe(3);
      expect(await harness.countAppRows(t.h)).toBe(2);
      expect(await wf.status(ok)).toMatchObject({ state: "success", result: "ok" });
      expect(await wf.status(failed)).toMatchObject({ state: "failed", error: "plain text" });
    });

    test("a run's timeout cancels it and it fails as timed out; finally still runs", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const notes: string[] = [];
      const note = pool.defineAction("note", (_c, s: string) => void notes.push(s));
      const flow = wf.define(
        "flow",
        async (step) => {
          try {
            await step.sleep(60_000);
          } finally {
            await step.runAction(note, "unwound");
          }
        },
        { timeoutMs: 30_000 },
      );
      const id = await wf.start(flow, null);
      await drain(pool);
      t.clock.advance(30_000);
      await drain(pool);
      expect(notes).toEqual(["unwound"]);
      expect(await wf.status(id)).toMatchObject({ state: "failed", error: "the workflow timed out after 30000 ms" });
    });
  });
}
