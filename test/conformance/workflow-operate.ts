/**
 * The operator's actions on runs, on every store, through WorkflowManager and through the
 * admin API (no workflow defined; a worker of the run's pool, stepped in the test, carries
 * the run on): a blocked run restarted from a step, skipped past the step its code no longer
 * makes, or canceled goes on and ends as it should, with no earlier step run again; a fork
 * copies the journal before its entry and leaves the source as it was; an event sent by the
 * admin is taken; bad input is refused, naming the field, and writes nothing.
 */
import { describe, expect, test } from "vitest";
import { InvalidArgumentError } from "../../src/index.js";
import { workpoolAdmin } from "../../src/admin/index.js";
import { UnknownWorkflowError, type WorkflowOnCompleteArgs } from "../../src/workflow/index.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext, type TestContext } from "./context.js";
import { drain, workflowPool } from "./workflow-kit.js";

type Proc<Tx> = ReturnType<typeof workflowPool<Tx>>;

/**
 * Workflow "flow" on `p` (a process with the code of one deploy): the actions named in
 * `names` in order, "go" waiting for that event; each action run is recorded in `ran`.
 * Returns the action names joined.
 */
function defineFlow<Tx>(p: Proc<Tx>, names: string[], ran: string[]) {
  const actions = new Map(["a", "b", "c"].map((n) => [n, p.pool.defineAction(n, () => (ran.push(n), n))]));
  return p.wf.define("flow", async (step) => {
    let out = "";
    for (const n of names) {
      if (n === "go") await step.awaitEvent("go");
      else out += await step.runAction(actions.get(n)!, null);
    }
    return out;
  });
}

/**
 * A run of a, b, go, c that a deploy without b blocks at entry 1 (its code waits for "go"
 * where the journal has b), once the event arrives. Returns the run and the new process.
 */
async function blockedRun<Tx>(t: TestContext<Tx>, ran: string[]): Promise<{ id: string; p: Proc<Tx> }> {
  const v1 = workflowPool(t);
  const id = await v1.wf.start(defineFlow(v1, ["a", "b", "go", "c"], ran), null);
  await drain(v1.pool);
  const p = workflowPool(t);
  defineFlow(p, ["a", "go", "c"], ran);
  await p.wf.sendEvent(id, "go", null);
  await drain(p.pool);
  expect(await p.wf.status(id)).toMatchObject({
    state: "blocked",
    blocked: { n: 1, expected: { kind: "event", name: "go" }, recorded: { kind: "action", name: "b" } },
  });
  return { id, p };
}

export function defineWorkflowOperateTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("workflows: operator actions", () => {
    const ctx = useTestContext(harness);

    test("skip: a blocked run goes on without the entry its code no longer makes; no earlier step runs again", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const { id, p } = await blockedRun(t, ran);
      expect(ran).toEqual(["a", "b"]);
      await p.wf.skip(id);
      await drain(p.pool);
      expect(await p.wf.status(id)).toMatchObject({ state: "success", result: "ac", steps: 3 });
      // Entry 1 (b) is gone; the event wait moved down to 1 with its event, and c ran once.
      expect((await p.wf.steps(id)).map((s) => [s.n, s.kind, s.name, s.state])).toEqual([
        [0, "action", "a", "success"],
        [1, "event", "go", "success"],
        [2, "action", "c", "success"],
      ]);
      expect(ran).toEqual(["a", "b", "c"]);
      // The event moved down with the entry that took it.
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      expect((await admin.workflowRun(id))!.events).toMatchObject([{ name: "go", consumedStep: 1 }]);
      await expect(p.wf.skip(id)).rejects.toThrow(/succeeded; only a blocked run can skip/);
    });

    test("skip is refused while an entry after the skipped one is open, and goes on once it has finished", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const flowOf = (p: Proc<Tx>, withA: boolean) => {
        const [a, b, c] = ["a", "b", "c"].map((n) => p.pool.defineAction(n, () => void ran.push(n)));
        return p.wf.define("flow", async (step) => {
          if (withA) await step.runAction(a!, null);
          await Promise.all([step.runAction(b!, null, { runAfter: 10_000 }), step.awaitEvent("x")]);
          await step.runAction(c!, null);
          return "done";
        });
      };
      const v1 = workflowPool(t);
      const id = await v1.wf.start(flowOf(v1, true), null);
      await drain(v1.pool);
      // The deploy drops a; b's end makes the new code replay, and it blocks at entry 0.
      const p = workflowPool(t);
      flowOf(p, false);
      t.clock.advance(10_000);
      await drain(p.pool);
      expect(await p.wf.status(id)).toMatchObject({ state: "blocked", blocked: { n: 0 } });
      await expect(p.wf.skip(id)).rejects.toThrow(/entry 2 \(event "x"\).*has not finished/);
      expect((await p.wf.steps(id)).length).toBe(3);
      await p.wf.sendEvent(id, "x", null);
      await p.wf.skip(id);
      await drain(p.pool);
      expect(await p.wf.status(id)).toMatchObject({ state: "success", result: "done", steps: 3 });
      expect(ran).toEqual(["a", "b", "c"]);
    });

    test("the admin restarts, skips and cancels blocked runs; a worker of the pool carries them on", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const ranR: string[] = [];
      const restarted = await blockedRun(t, ranR);
      await admin.restartWorkflow(restarted.id, { from: 1 });
      await drain(restarted.p.pool);
      expect(await admin.workflow(restarted.id)).toMatchObject({ state: "success", result: "ac" });
      // The event was given back with its dropped entry and taken again; a ran once.
      expect(ranR).toEqual(["a", "b", "c"]);

      const ranS: string[] = [];
      const skipped = await blockedRun(t, ranS);
      await admin.skipWorkflowStep(skipped.id);
      await drain(skipped.p.pool);
      expect(await admin.workflow(skipped.id)).toMatchObject({ state: "success", result: "ac", steps: 3 });
      expect(ranS).toEqual(["a", "b", "c"]);

      const ranC: string[] = [];
      const canceled = await blockedRun(t, ranC);
      expect(await admin.cancelWorkflow(canceled.id)).toBe(true);
      await drain(canceled.p.pool);
      expect(await admin.workflow(canceled.id)).toMatchObject({ state: "canceled" });
      expect(ranC).toEqual(["a", "b"]);
    });

    test("the admin's restart of a failed run gives it its onComplete again and a new deadline", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      let fail = true;
      const flaky = pool.defineAction("flaky", () => {
        if (fail) throw new Error("down");
        return "up";
      });
      const done: WorkflowOnCompleteArgs[] = [];
      const onDone = pool.defineMutation("onDone", (_c, a: WorkflowOnCompleteArgs) => void done.push(a));
      const flow = wf.define("flow", (step) => step.runAction(flaky, null), { timeoutMs: 60_000 });
      const id = await wf.start(flow, null, { onComplete: onDone });
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({ state: "failed" });
      fail = false;
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      await expect(admin.restartWorkflow(id, { from: 2 })).rejects.toThrow(/options\.from.*0 to 1/);
      t.clock.advance(30_000);
      await admin.restartWorkflow(id, { from: 0 });
      expect((await admin.workflowRun(id))!.run).toMatchObject({ state: "running", deadline: t.clock.now() + 60_000 });
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({ state: "success", result: "up" });
      expect(done.map((d) => d.result.kind)).toEqual(["failed", "success"]);
    });

    test("a fork copies the finished entries before its entry and goes on from there; the source does not change", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const p = workflowPool(t);
      const flow = defineFlow(p, ["a", "b", "go", "c"], ran);
      const done: WorkflowOnCompleteArgs[] = [];
      const onDone = p.pool.defineMutation("onDone", (_c, a: WorkflowOnCompleteArgs) => void done.push(a));
      const id = await p.wf.start(flow, null, { onComplete: onDone });
      await drain(p.pool);
      // While the source waits at entry 2, a fork from 3 would copy an open entry.
      await expect(p.wf.fork(id, { from: 3 })).rejects.toThrow(/entry 2 \(event "go"\).*has not finished/);
      await p.wf.sendEvent(id, "go", null);
      await drain(p.pool);
      const before = { status: await p.wf.status(id), steps: await p.wf.steps(id) };
      expect(before.status).toMatchObject({ state: "success", result: "abc" });
      const fork = await p.wf.fork(id, { from: 2, workflowId: "fork-1" });
      expect(fork).toBe("fork-1");
      expect(await p.wf.status(fork)).toMatchObject({ state: "running", steps: 2, parentId: null });
      await drain(p.pool);
      // The fork took the event the source was sent (its copy) and ran only c again.
      expect(await p.wf.status(fork)).toMatchObject({ state: "success", result: "abc", steps: 4 });
      expect((await p.wf.steps(fork)).slice(0, 2)).toEqual(before.steps.slice(0, 2));
      expect(ran).toEqual(["a", "b", "c", "c"]);
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      expect((await admin.workflowRun(fork))!.events).toMatchObject([{ name: "go", consumedStep: 2 }]);
      expect({ status: await p.wf.status(id), steps: await p.wf.steps(id) }).toEqual(before);
      // A fork calls no onComplete; the source's ran once.
      expect(done.map((d) => d.workflowId)).toEqual([id]);
      await expect(p.wf.fork(id, { from: 1, workflowId: "fork-1" })).rejects.toThrow(/options\.workflowId.*exists/);

      // The admin forks too, with a new id, from the end: nothing runs but the function's return.
      const again = await admin.forkWorkflow(id, { from: 4 });
      expect(again).not.toBe(id);
      await drain(p.pool);
      expect(await admin.workflow(again)).toMatchObject({ state: "success", result: "abc", steps: 4 });
      expect(ran).toEqual(["a", "b", "c", "c"]);
    });

    test("restart and fork keep no entry the run's cancel ended: the new life would be given that cancel", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const p = workflowPool(t);
      const flow = defineFlow(p, ["a", "go", "c"], ran);
      const id = await p.wf.start(flow, null);
      await drain(p.pool);
      expect(await p.wf.cancel(id)).toBe(true);
      await drain(p.pool);
      expect(await p.wf.status(id)).toMatchObject({ state: "canceled", steps: 2 });
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const refused = /options\.from: entry 1 \(event "go"\) of run .* was ended by the run's cancel; (restart|fork) from 1 or earlier/;
      await expect(p.wf.restart(id, { from: 2 })).rejects.toThrow(refused);
      await expect(admin.restartWorkflow(id, { from: 2 })).rejects.toThrow(refused);
      await expect(p.wf.fork(id, { from: 2, workflowId: "fork-2" })).rejects.toThrow(refused);
      await expect(p.wf.fork(id, { from: 2 })).rejects.toBeInstanceOf(InvalidArgumentError);
      // Refused, nothing was written: no fork, and the run is as it was.
      await expect(p.wf.status("fork-2")).rejects.toBeInstanceOf(UnknownWorkflowError);
      expect(await p.wf.status(id)).toMatchObject({ state: "canceled", steps: 2 });
      // From the canceled entry on, both go: the wait is made again.
      const fork = await p.wf.fork(id, { from: 1 });
      await p.wf.restart(id, { from: 1 });
      for (const run of [id, fork]) await p.wf.sendEvent(run, "go", null);
      await drain(p.pool);
      for (const run of [id, fork]) expect(await p.wf.status(run)).toMatchObject({ state: "success", result: "ac", steps: 3 });
      expect(ran).toEqual(["a", "c", "c"]);
    });

    test("the admin sends events, and its cancel of a parent run cancels its child runs", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const child = wf.define("child", async (step) => {
        await step.awaitEvent("never");
      });
      const parent = wf.define("parent", async (step) => {
        const ev = await step.awaitEvent<{ n: number }>("go");
        await step.runWorkflow(child, null);
        return ev.kind === "event" ? ev.value.n : null;
      });
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const id = await wf.start(parent, null);
      await drain(pool);
      await admin.sendWorkflowEvent(id, "go", { n: 7 });
      await drain(pool);
      const steps = await wf.steps(id);
      expect(steps.map((s) => [s.kind, s.state])).toEqual([
        ["event", "success"],
        ["workflow", "running"],
      ]);
      expect(steps[0]!.result).toEqual({ kind: "event", value: { n: 7 } });
      const childId = steps[1]!.childId!;
      expect(await admin.cancelWorkflow(id)).toBe(true);
      await drain(pool);
      expect(await admin.workflow(id)).toMatchObject({ state: "canceled" });
      expect(await admin.workflow(childId)).toMatchObject({ state: "canceled" });
      await expect(admin.sendWorkflowEvent(id, "go", null)).rejects.toThrow(/has finished \(canceled\)/);
    });

    test("a manager acts only on runs of its own pool", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const { id } = await blockedRun(t, ran);
      const other = workflowPool(t, { name: "other" });
      await expect(other.wf.skip(id)).rejects.toThrow(/belongs to pool "default"/);
      await expect(other.wf.restart(id, { from: 0 })).rejects.toThrow(InvalidArgumentError);
      await expect(other.wf.fork(id, { from: 0 })).rejects.toThrow(InvalidArgumentError);
    });

    test("every action refuses bad input naming the field, and unknown runs, and writes nothing", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const { id, p } = await blockedRun(t, ran);
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const snapshot = async () => ({
        status: await p.wf.status(id),
        steps: await p.wf.steps(id),
        work: await t.driver.counts(p.pool.name, t.clock.now()),
      });
      const before = await snapshot();
      const refusals: [() => Promise<unknown>, RegExp][] = [
        [() => p.wf.restart(id, { from: -1 }), /options\.from.*0 to/],
        [() => p.wf.restart(id, { from: 1.5 }), /options\.from/],
        [() => p.wf.restart(id, { from: 4 }), /options\.from.*0 to 3/],
        [() => p.wf.restart(id, { from: 0, when: 1 } as never), /when/],
        [() => p.wf.restart(id, undefined as never), /options/],
        [() => p.wf.restart("bad id", { from: 0 }), /workflowId/],
        [() => p.wf.fork(id, { from: "1" } as never), /options\.from/],
        [() => p.wf.fork(id, { from: 9 }), /options\.from.*0 to 3/],
        [() => p.wf.fork(id, { from: 0, workflowId: "bad id" }), /options\.workflowId/],
        [() => p.wf.fork(id, { from: 0, workflowId: id }), /options\.workflowId.*exists/],
        [() => p.wf.skip("bad id"), /workflowId/],
        [() => p.wf.sendEvent(id, "", null), /name/],
        [() => admin.restartWorkflow(id, { from: 4 }), /options\.from.*0 to 3/],
        [() => admin.restartWorkflow(id, {} as never), /options\.from/],
        [() => admin.restartWorkflow("bad id", { from: 0 }), /id/],
        [() => admin.forkWorkflow(id, { from: -1 }), /options\.from/],
        [() => admin.forkWorkflow(id, { from: 0, extra: true } as never), /extra/],
        [() => admin.forkWorkflow(id, { from: 0, workflowId: id }), /options\.workflowId.*exists/],
        [() => admin.skipWorkflowStep(""), /id/],
        [() => admin.sendWorkflowEvent(id, "bad name!", null), /name/],
        [() => admin.sendWorkflowEvent(id, "go", () => 1), /payload/],
      ];
      for (const [call, message] of refusals) {
        const error: unknown = await call().then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect(String(error)).toMatch(message);
      }
      const unknown = [
        () => p.wf.restart("no-such-run", { from: 0 }),
        () => p.wf.fork("no-such-run", { from: 0 }),
        () => p.wf.skip("no-such-run"),
        () => admin.restartWorkflow("no-such-run", { from: 0 }),
        () => admin.forkWorkflow("no-such-run", { from: 0 }),
        () => admin.skipWorkflowStep("no-such-run"),
        () => admin.sendWorkflowEvent("no-such-run", "go"),
      ];
      for (const call of unknown) await expect(call()).rejects.toBeInstanceOf(UnknownWorkflowError);
      expect(await snapshot()).toEqual(before);
      // Runs that are not blocked cannot skip; a running run cannot be restarted.
      const waiting = await p.wf.start(defineFlowAgain(p), null);
      await drain(p.pool);
      await expect(admin.skipWorkflowStep(waiting)).rejects.toThrow(/is running; only a blocked run can skip/);
      await expect(p.wf.restart(waiting, { from: 0 })).rejects.toThrow(/is running; only failed, canceled or blocked/);
      expect((await p.wf.steps(waiting)).map((s) => s.state)).toEqual(["waiting"]);
    });
  });
}

/** A second workflow on `p` that waits for an event that never comes. */
function defineFlowAgain<Tx>(p: Proc<Tx>) {
  return p.wf.define("waits", async (step) => {
    await step.awaitEvent("never");
  });
}
