/**
 * Workflow guarantees 15-17 and 21 on every store: a start exists iff its transaction
 * commits and a workflowId gives one run; each step's outcome is journaled once and a
 * journaled step never runs again (mutation steps exactly once, with their writes); a run
 * continues in another process after its driver died; sleeping holds no slot; a run that
 * stays in one process is not replayed.
 */
import { describe, expect, test } from "vitest";
import { ManualClock } from "../../src/index.js";
import { workpoolAdmin } from "../../src/admin/index.js";
import type { StoreHarness } from "./harness.js";
import { deferred, nextEvent, T0, useTestContext, withDriver } from "./context.js";
import { advance } from "../../src/workflow/advance.js";
import { drain, workflowPool } from "./workflow-kit.js";

export function defineWorkflowTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("workflows", () => {
    const ctx = useTestContext(harness);

    test("a run's steps run in order, in parallel where the function awaits them together, and its result is stored", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const double = pool.defineAction("double", (_c, n: number) => n * 2);
      const add = pool.defineMutation("add", (_c, a: { x: number; y: number }) => a.x + a.y);
      const flow = wf.define("flow", async (step, args: { n: number }) => {
        const a = await step.runAction(double, args.n);
        const [b, c] = await Promise.all([step.runAction(double, a), step.runMutation(add, { x: a, y: 1 })]);
        return { a, b, c, at: step.now(), id: step.workflowId };
      });
      const id = await wf.start(flow, { n: 3 });
      expect(await wf.status(id)).toMatchObject({ workflowId: id, name: "flow", state: "running", steps: 0 });
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({ state: "success", result: { a: 6, b: 12, c: 7, at: T0, id }, steps: 4, version: null });
      const steps = await wf.steps(id);
      expect(steps.map((s) => [s.n, s.kind, s.name, s.state, s.result])).toEqual([
        [0, "action", "double", "success", 6],
        [1, "action", "double", "success", 12],
        [2, "mutation", "add", "success", 7],
        [3, "now", "now", "success", T0],
      ]);
      expect(steps[0]!.workId).toEqual(expect.any(String));
      expect(await pool.status(steps[0]!.workId!)).toMatchObject({ state: "finished", result: { kind: "success", returnValue: 6 } });
    });

    test("start with { tx } exists only if the transaction commits; a workflowId started twice is one run", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const ran: string[] = [];
      const flow = wf.define("flow", async (step, args: { tag: string }) => {
        await step.sleep(0);
        ran.push(args.tag);
        return args.tag;
      });
      await pool.runOnce();
      await harness.inAppTransaction(t.h, (tx) => wf.start(flow, { tag: "rolled back" }, { tx, workflowId: "order-1" }), true);
      await expect(wf.status("order-1")).rejects.toThrow(/no workflow run/);
      await harness.inAppTransaction(t.h, (tx) => wf.start(flow, { tag: "committed" }, { tx, workflowId: "order-1" }), false);
      expect(await wf.start(flow, { tag: "second start" }, { workflowId: "order-1" })).toBe("order-1");
      await drain(pool);
      expect(ran).toEqual(["committed"]);
      expect(await wf.status("order-1")).toMatchObject({ state: "success", result: "committed" });
    });

    test("a mutation step runs exactly once and its writes commit with its journal entry; a journaled step never runs again", async () => {
      const t = await ctx();
      await harness.createAppTable(t.h);
      const { pool, wf } = workflowPool(t);
      let calls = 0;
      const write = pool.defineMutation("write", async (c, k: string) => {
        calls++;
        await harness.insertAppRow(c.tx, k);
      });
      const act = pool.defineAction("act", () => ++calls);
      const flow = wf.define("flow", async (step) => {
        await step.runMutation(write, "row-1");
        return step.runAction(act, null);
      });
      const id = await wf.start(flow, null);
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({ state: "success" });
      expect(calls).toBe(2);
      expect(await harness.countAppRows(t.h)).toBe(1);
    });

    test("a run whose driving process died continues in another process after the lease, with the result it would have had", async () => {
      const t = await ctx();
      // The dead process's clock never moves: it never heart-beats, and its attempts' leases lapse.
      const frozen = new ManualClock(T0);
      const dead = workflowPool(t, { leaseMs: 10_000, clock: frozen });
      const live = workflowPool(t, { leaseMs: 10_000 });
      const hang = deferred<number>();
      const sum: number[] = [];
      const flows = [dead, live].map((p) => {
        const slow = p.pool.defineAction("slow", (_c, n: number) => (p === dead ? hang.promise : n * 10));
        const rec = p.pool.defineMutation("rec", (_c, n: number) => void sum.push(n));
        return p.wf.define("flow", async (step, n: number) => {
          const a = await step.runAction(slow, n, { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } });
          await step.runMutation(rec, a);
          return a + 1;
        });
      });
      const id = await dead.wf.start(flows[0]!, 4);
      await dead.pool.runOnce(); // the advance: the action step is enqueued
      const started = nextEvent(dead.pool, "started");
      const stuck = dead.pool.runOnce(); // the action step starts in the dead process and hangs
      await started;
      t.clock.advance(20_000);
      expect((await live.pool.runOnce()).rescued).toBe(1);
      t.clock.advance(1000);
      await drain(live.pool);
      expect(await live.wf.status(id)).toMatchObject({ state: "success", result: 41 });
      expect(sum).toEqual([40]);
      hang.resolve(99);
      await stuck;
      expect(await live.wf.status(id)).toMatchObject({ state: "success", result: 41 });
      expect((await live.wf.steps(id))[0]).toMatchObject({ state: "success", result: 40 });
    });

    test("a run that stays in one process continues in memory; another process replays its journal without running a step again", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      let starts = 0;
      const runs: number[] = [];
      const act = pool.defineAction("act", (_c, i: number) => void runs.push(i));
      const flow = wf.define("flow", async (step) => {
        starts++;
        for (let i = 0; i < 4; i++) await step.runAction(act, i);
        await step.awaitEvent("more");
        await step.runAction(act, 4);
        return "done";
      });
      const id = await wf.start(flow, null);
      await drain(pool);
      expect(runs).toEqual([0, 1, 2, 3]);
      // Four steps, one execution: no replay while the run stays here.
      expect(starts).toBe(1);
      // A second process (its own pool instance and manager) drives the rest: it replays.
      const other = workflowPool(t);
      const act2 = other.pool.defineAction("act", (_c, i: number) => void runs.push(i));
      let otherStarts = 0;
      other.wf.define("flow", async (step) => {
        otherStarts++;
        for (let i = 0; i < 4; i++) await step.runAction(act2, i);
        await step.awaitEvent("more");
        await step.runAction(act2, 4);
        return "done";
      });
      await other.wf.sendEvent(id, "more", null);
      await drain(other.pool);
      expect(await other.wf.status(id)).toMatchObject({ state: "success", result: "done" });
      expect(runs).toEqual([0, 1, 2, 3, 4]);
      expect(otherStarts).toBe(1);
    });

    test("a sleep is durable and holds no slot: other work runs while a run sleeps", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t, { maxParallelism: 1 });
      const ran: string[] = [];
      const note = pool.defineAction("note", (_c, s: string) => void ran.push(s));
      const flow = wf.define("flow", async (step) => {
        await step.runAction(note, "before");
        await step.sleep(60_000);
        await step.runAction(note, "after");
      });
      const id = await wf.start(flow, null);
      await drain(pool);
      expect(ran).toEqual(["before"]);
      expect((await t.driver.counts(pool.name, t.clock.now())).running).toBe(0);
      await pool.enqueueAction(note, "other work");
      await drain(pool);
      expect(ran).toEqual(["before", "other work"]);
      t.clock.advance(60_000);
      await drain(pool);
      expect(ran).toEqual(["before", "other work", "after"]);
      expect(await wf.status(id)).toMatchObject({ state: "success" });
    });

    test("the admin API reads a run and its journal with no workflow defined, and its cancel request is carried out by a worker", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const flow = wf.define("flow", async (step) => {
        await step.awaitEvent("never");
      });
      const id = await wf.start(flow, null);
      await drain(pool);
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      expect(await admin.workflow(id)).toMatchObject({ workflowId: id, name: "flow", state: "running", steps: 1 });
      expect(await admin.workflowSteps(id)).toMatchObject([{ n: 0, kind: "event", name: "never", state: "waiting" }]);
      expect(await admin.workflow("no-such-run")).toBeNull();
      expect(await admin.workflowSteps("no-such-run")).toBeNull();
      await expect(admin.workflow("bad id")).rejects.toThrow(/id/);
      expect(await admin.cancelWorkflow(id)).toBe(true);
      await drain(pool);
      expect(await admin.workflow(id)).toMatchObject({ state: "canceled" });
      expect(await admin.cancelWorkflow(id)).toBe(false);
    });

    test("an advance that another writer beat to its commit reads again and gives the outcomes it read", async () => {
      const t = await ctx();
      let id = "";
      let armed = false;
      // Another writer moves the run (a bumped generation) just before the advance's commit.
      const store = withDriver(t.h.store, {
        async transaction(real, fn) {
          if (armed) {
            armed = false;
            await real.workflows().updateRun(id, { now: t.clock.now() });
          }
          return real.transaction(fn);
        },
      });
      const { pool, wf } = workflowPool(t, {}, store);
      const act = pool.defineAction("act", () => 41);
      const flow = wf.define("flow", async (step) => (await step.runAction(act, null)) + 1);
      id = await wf.start(flow, null);
      await pool.runOnce(); // the first advance: the step's work
      wf.internals.executions.drop(id); // as in another process: no execution kept here
      await pool.runOnce(); // the step runs; its outcome waits for an advance
      armed = true;
      await advance(wf.internals, id);
      expect(await wf.status(id)).toMatchObject({ state: "success", result: 42 });
    });
  });
}
