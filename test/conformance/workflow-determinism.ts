/**
 * Workflow guarantees 18 and 21 on every store: replay matches each call to the journal by
 * its position and gives outcomes back in the rounds they were first given (a race replays
 * as it ran); code that calls something else is blocked with both entries and runs nothing
 * new until it is canceled or restarted; a result over the size limit fails its step
 * (catchable) and a journal over its cap fails the run; bad input is refused.
 */
import { describe, expect, test } from "vitest";
import { InvalidArgumentError } from "../../src/index.js";
import { workpoolAdmin } from "../../src/admin/index.js";
import { StepFailedError, WorkflowManager, type WorkflowOnCompleteArgs, type WorkflowStep } from "../../src/workflow/index.js";
import type { StoreHarness } from "./harness.js";
import { deferred, useTestContext } from "./context.js";
import { drain, workflowPool } from "./workflow-kit.js";

export function defineWorkflowDeterminismTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("workflows: determinism, limits, bad input", () => {
    const ctx = useTestContext(harness);

    test("a race replays as it ran: outcomes come back in the rounds they were first given", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const define = (p: ReturnType<typeof workflowPool<Tx>>) => {
        const slow = p.pool.defineAction("slow", () => "slow");
        const fast = p.pool.defineAction("fast", () => "fast");
        const after = p.pool.defineAction("after", (_c, w: string) => void ran.push(w));
        return p.wf.define("race", async (step) => {
          // slow finishes later than fast; a replay that gave outcomes back in step order would pick slow.
          const winner = await Promise.race([step.runAction(slow, null, { runAfter: 10_000 }), step.runAction(fast, null)]);
          await step.runAction(after, winner);
          await step.awaitEvent("end");
          return winner;
        });
      };
      const a = workflowPool(t);
      const id = await a.wf.start(define(a), null);
      await drain(a.pool);
      t.clock.advance(10_000);
      await drain(a.pool);
      expect((await a.wf.steps(id)).map((s) => [s.name, s.state])).toEqual([
        ["slow", "success"],
        ["fast", "success"],
        ["after", "success"],
        ["end", "waiting"],
      ]);
      // Another process replays the run to take the event.
      const b = workflowPool(t);
      define(b);
      await b.wf.sendEvent(id, "end", null);
      await drain(b.pool);
      expect(await b.wf.status(id)).toMatchObject({ state: "success", result: "fast" });
      expect(ran).toEqual(["fast"]);
    });

    test("code that calls something else than the journal recorded blocks the run with both entries; cancel ends it", async () => {
      const t = await ctx();
      const v1 = workflowPool(t);
      const first = v1.pool.defineAction("charge", () => "charged");
      const gate = v1.pool.defineAction("gate", () => "ok");
      const flowV1 = v1.wf.define("order", async (step) => {
        await step.runAction(first, null);
        await step.awaitEvent("approved");
        await step.runAction(gate, null);
      });
      const done: WorkflowOnCompleteArgs[] = [];
      const onDone = v1.pool.defineMutation("onDone", (_c, args: WorkflowOnCompleteArgs) => void done.push(args));
      const id = await v1.wf.start(flowV1, null, { onComplete: onDone });
      await drain(v1.pool);
      // A deploy changes the code: it now calls "refund" where the journal has "charge".
      const v2 = workflowPool(t);
      const ran: string[] = [];
      const refund = v2.pool.defineAction("refund", () => void ran.push("refund"));
      v2.pool.defineAction("charge", () => void ran.push("charge"));
      v2.pool.defineMutation("onDone", (_c, args: WorkflowOnCompleteArgs) => void done.push(args));
      v2.wf.define("order", async (step) => {
        await step.runAction(refund, null);
      });
      await v2.wf.sendEvent(id, "approved", null);
      await drain(v2.pool);
      expect(await v2.wf.status(id)).toMatchObject({
        state: "blocked",
        blocked: { n: 0, expected: { kind: "action", name: "refund" }, recorded: { kind: "action", name: "charge" } },
      });
      expect(ran).toEqual([]);
      expect(await v2.wf.cancel(id)).toBe(true);
      await drain(v2.pool);
      expect(await v2.wf.status(id)).toMatchObject({ state: "canceled" });
      expect(done).toEqual([{ workflowId: id, context: undefined, result: { kind: "canceled" } }]);
    });

    test("a blocked run continues after the code is fixed and it is restarted from a step; earlier steps do not run again", async () => {
      const t = await ctx();
      const v1 = workflowPool(t);
      const runs: string[] = [];
      const steps = (p: typeof v1, names: string[]) => names.map((n) => p.pool.defineAction(n, () => void runs.push(n)));
      const [a1, b1] = steps(v1, ["a", "b"]);
      const flow = v1.wf.define("flow", async (step) => {
        await step.runAction(a1!, null);
        await step.awaitEvent("go");
        await step.runAction(b1!, null);
        return "done";
      });
      const id = await v1.wf.start(flow, null);
      await drain(v1.pool);
      const broken = workflowPool(t);
      const [, , c2] = steps(broken, ["a", "b", "c"]);
      broken.wf.define("flow", async (step) => {
        await step.runAction(c2!, null);
      });
      await broken.wf.sendEvent(id, "go", null);
      await drain(broken.pool);
      expect((await broken.wf.status(id)).state).toBe("blocked");
      // The fix: the code the journal recorded; restart from step 1 keeps step 0 ("a").
      const fixed = workflowPool(t);
      const [a3, b3] = steps(fixed, ["a", "b"]);
      fixed.wf.define("flow", async (step) => {
        await step.runAction(a3!, null);
        await step.awaitEvent("go");
        await step.runAction(b3!, null);
        return "done";
      });
      await expect(fixed.wf.restart(id, { from: 9 })).rejects.toThrow(InvalidArgumentError);
      await fixed.wf.restart(id, { from: 1 });
      await drain(fixed.pool);
      expect(await fixed.wf.status(id)).toMatchObject({ state: "success", result: "done" });
      // The event step was dropped and the same event taken again; "a" ran once.
      expect(runs).toEqual(["a", "b"]);
    });

    test("restarting a blocked run cancels the work still open in the entries it drops; their late results touch nothing", async () => {
      const t = await ctx();
      const runs: string[] = [];
      const v1 = (p: ReturnType<typeof workflowPool<Tx>>) => {
        const slow = p.pool.defineAction("slow", () => void runs.push("slow"));
        const fast = p.pool.defineAction("fast", () => void runs.push("fast"));
        p.pool.defineAction("other", () => void runs.push("other"));
        return p.wf.define("flow", async (step) => {
          await Promise.all([step.runAction(slow, null, { runAfter: 10_000 }), step.runAction(fast, null)]);
          return "done";
        });
      };
      const a = workflowPool(t);
      const id = await a.wf.start(v1(a), null);
      await a.pool.runOnce(); // the advance: slow (due in 10 s) and fast
      const b = workflowPool(t);
      b.pool.defineAction("slow", () => void runs.push("slow"));
      b.pool.defineAction("fast", () => void runs.push("fast"));
      const other = b.pool.defineAction("other", () => void runs.push("other"));
      b.wf.define("flow", async (step) => {
        await step.runAction(other, null);
      });
      await drain(b.pool);
      expect((await b.wf.status(id)).state).toBe("blocked");
      const oldSlow = (await b.wf.steps(id))[0]!.workId!;
      const c = workflowPool(t);
      v1(c);
      await c.wf.restart(id, { from: 0 });
      expect(await c.pool.status(oldSlow)).toMatchObject({ state: "finished", result: { kind: "canceled" } });
      await drain(c.pool);
      t.clock.advance(10_000);
      await drain(c.pool);
      expect(await c.wf.status(id)).toMatchObject({ state: "success", result: "done" });
      expect(runs.sort()).toEqual(["fast", "fast", "slow"]);
    });

    test("a step result over the size limit fails that step, catchably; a journal over its cap fails the run", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 20 });
      const wf = new WorkflowManager(pool, { maxSteps: 3 });
      const big = pool.defineAction("big", () => "x".repeat(2 * 1024 * 1024));
      const sized = wf.define("sized", async (step) => {
        try {
          await step.runAction(big, null);
          return "no error";
        } catch (e) {
          return e instanceof StepFailedError ? e.message : "other error";
        }
      });
      const long = wf.define("long", async (step) => {
        for (let i = 0; i < 5; i++) step.now();
        await step.sleep(1);
      });
      const a = await wf.start(sized, null);
      const b = await wf.start(long, null);
      await drain(pool);
      expect((await wf.status(a)).result).toMatch(/returnValue.*(1 MiB|bytes)/);
      expect(await wf.status(b)).toMatchObject({ state: "failed", error: "the workflow's journal would pass its limit of 3 steps" });
    });

    test("a journal's size counts its args and the outcomes its function was given; over maxJournalBytes the run fails", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 20 });
      const wf = new WorkflowManager(pool, { maxJournalBytes: 1024 });
      const text = pool.defineAction("text", (_c, n: number) => "x".repeat(n));
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const flow = wf.define("flow", async (step, sizes: number[]) => {
        for (const n of sizes) await step.runAction(text, n);
        return "done";
      });
      const small = await wf.start(flow, [100, 200]);
      await drain(pool);
      expect(await wf.status(small)).toMatchObject({ state: "success" });
      // The args ("100", "200") and the two results of 100 and 200 characters, each with its outcome's few bytes of JSON.
      const { journalBytes } = (await admin.workflowRun(small))!.run;
      expect(journalBytes).toBeGreaterThan(306);
      expect(journalBytes).toBeLessThan(306 + 2 * 60);
      // Each call's args are a few bytes: only the results given to the function pass 1,024.
      const big = await wf.start(flow, [600, 600, 10]);
      await drain(pool);
      expect(await wf.status(big)).toMatchObject({
        state: "failed",
        error: "the workflow's journal would pass its limit of 1024 bytes",
        steps: 2,
      });
    });

    test("every call refuses bad input with an error naming the field, and writes nothing", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const act = pool.defineAction("act", () => 1);
      let kept: WorkflowStep | null = null;
      const outside = deferred<unknown>();
      const flow = wf.define("flow", async (step, args: { n: number }) => {
        kept = step;
        return args.n;
      });
      const waits = wf.define("waits", async (step) => {
        kept = step;
        await step.awaitEvent("never");
      });
      expect(() => wf.define("flow", async () => 1)).toThrow(/already defined/);
      expect(() => wf.define("bad name!", async () => 1)).toThrow(/define\(name\)/);
      await expect(wf.start({ kind: "workflow", name: "nope", pool: pool.name } as never, {})).rejects.toThrow(
        /workflow: must be a workflow this manager defined/,
      );
      await expect(wf.start(flow, { n: 1n } as never)).rejects.toThrow(/args\.n/);
      await expect(wf.start(flow, { n: 1 }, { workflowId: "bad id" })).rejects.toThrow(/options\.workflowId/);
      await expect(wf.start(flow, { n: 1 }, { colour: "red" } as never)).rejects.toThrow(/colour/);
      await expect(wf.sendEvent("no-such-run", "go")).rejects.toThrow(/no workflow run/);
      await expect(wf.sendEvent("x", "bad name!")).rejects.toThrow(/name/);
      await expect(wf.sendEvent("x", "go", () => 1)).rejects.toThrow(/payload/);
      await expect(wf.status("no-such-run")).rejects.toThrow(/no workflow run/);
      expect(await harness.countWorkRows(t.h)).toBe(0);
      const id = await wf.start(flow, { n: 2 });
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({ state: "success", result: 2 });
      // A step called after the function returned is refused, and writes nothing.
      await expect(kept!.runAction(act, null)).rejects.toThrow(/after the workflow function returned/);
      expect((await wf.steps(id)).length).toBe(0);
      // A step called from code outside a running function is refused too.
      const w = await wf.start(waits, null);
      await drain(pool);
      setImmediate(() => kept!.runAction(act, null).then(outside.resolve, outside.resolve));
      expect(String(await outside.promise)).toMatch(/from outside its workflow function/);
      expect(() => kept!.now()).toThrow(/from outside/);
      expect((await wf.steps(w)).length).toBe(1);
      await expect(wf.restart(id, { from: 0 })).rejects.toThrow(/succeeded/);
    });
  });
}
