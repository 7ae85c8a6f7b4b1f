/**
 * The admin API's reads of workflow runs on every store: the run list with its filters and
 * keyset pages, counts by state, and one run's detail (journal pages, child runs, events,
 * due times of sleeps), all with no workflow defined in the reading process.
 */
import { describe, expect, test } from "vitest";
import { workpoolAdmin, type WorkflowSummary } from "../../src/admin/index.js";
import type { StoreHarness } from "./harness.js";
import { T0, useTestContext } from "./context.js";
import { drain, workflowPool } from "./workflow-kit.js";

export function defineWorkflowAdminReadTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("workflow admin reads", () => {
    const ctx = useTestContext(harness);

    /** Runs of two workflows in every state but blocked, a child, created a second apart (two at the same time). */
    async function someRuns(t: Awaited<ReturnType<typeof ctx>>) {
      const { pool, wf } = workflowPool(t);
      const fail = pool.defineAction("fail", () => {
        throw new Error("it broke\non two lines");
      });
      const ok = pool.defineAction("ok", (_c, n: number) => n);
      const child = wf.define("child", async (step, n: number) => step.runAction(ok, n));
      const orders = wf.define("orders", async (step, args: { mode: string }) => {
        if (args.mode === "fail") return step.runAction(fail, null, { retry: false });
        if (args.mode === "wait") return step.awaitEvent("go");
        if (args.mode === "sleep") return step.sleep(60_000);
        return step.runWorkflow(child, 7);
      });
      const refunds = wf.define("refunds", async (step) => step.awaitEvent("never"));
      const ids: Record<string, string> = {};
      ids.parent = await wf.start(orders, { mode: "child" }, { workflowId: "o-parent" });
      t.clock.advance(1000);
      ids.fail = await wf.start(orders, { mode: "fail" }, { workflowId: "o-fail" });
      t.clock.advance(1000);
      ids.wait = await wf.start(orders, { mode: "wait" }, { workflowId: "o-wait" });
      ids.sleep = await wf.start(orders, { mode: "sleep" }, { workflowId: "o-sleep" });
      t.clock.advance(1000);
      ids.refund = await wf.start(refunds, null, { workflowId: "r-cancel" });
      await drain(pool);
      await wf.cancel(ids.refund);
      await drain(pool);
      return { pool, wf, ids };
    }

    test("lists runs newest first in keyset pages, filtered by pool, name, state, parent and creation time", async () => {
      const t = await ctx();
      const { pool } = await someRuns(t);
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const all = await admin.workflows();
      const childId = all.items.find((r) => r.name === "child")!.workflowId;
      // The child run starts in the parent's first advance, at the parent's start time.
      expect(all.items.map((r) => r.workflowId)).toEqual(
        ["r-cancel", "o-wait", "o-sleep", "o-fail", "o-parent", childId].sort(byNewest(all.items)),
      );
      expect(all.cursor).toBeNull();
      const states = Object.fromEntries(all.items.map((r) => [r.workflowId, r.state]));
      expect(states).toEqual({
        "r-cancel": "canceled",
        "o-wait": "running",
        "o-sleep": "running",
        "o-fail": "failed",
        "o-parent": "success",
        [childId]: "success",
      });
      const failed = all.items.find((r) => r.workflowId === "o-fail")!;
      expect(failed).toMatchObject({ name: "orders", pool: pool.name, version: null, parentId: null, createdAt: T0 + 1000 });
      expect(failed.error).toMatch(/it broke/);
      expect(failed.finishedAt).toEqual(expect.any(Number));

      // Pages of 2 walk the same list with nothing repeated or left out (two runs share a creation time).
      const walked: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 10; i++) {
        const page = await admin.workflows({ limit: 2, ...(cursor ? { cursor } : {}) });
        walked.push(...page.items.map((r) => r.workflowId));
        if (page.cursor === null) break;
        cursor = page.cursor;
      }
      expect(walked).toEqual(all.items.map((r) => r.workflowId));

      const ids = async (o: Parameters<typeof admin.workflows>[0]) => (await admin.workflows(o)).items.map((r) => r.workflowId).sort();
      expect(await ids({ name: "refunds" })).toEqual(["r-cancel"]);
      expect(await ids({ pool: pool.name, name: "orders", state: "unfinished" })).toEqual(["o-sleep", "o-wait"]);
      expect(await ids({ state: "finished" })).toEqual([childId, "o-fail", "o-parent", "r-cancel"].sort());
      expect(await ids({ state: "failed" })).toEqual(["o-fail"]);
      expect(await ids({ state: "blocked" })).toEqual([]);
      expect(await ids({ parentId: "o-parent" })).toEqual([childId]);
      expect(await ids({ createdAfter: T0 + 1000, createdBefore: T0 + 2001 })).toEqual(["o-fail", "o-sleep", "o-wait"]);
      expect(await ids({ pool: "no-such-pool" })).toEqual([]);
      expect(await ids({ version: "v2" })).toEqual([]);
    });

    test("counts runs by pool, workflow and state", async () => {
      const t = await ctx();
      const { pool } = await someRuns(t);
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const counts = await admin.workflowCounts();
      const zero = { running: 0, blocked: 0, success: 0, failed: 0, canceled: 0 };
      expect(counts).toEqual([
        { pool: pool.name, name: "child", ...zero, success: 1 },
        { pool: pool.name, name: "orders", ...zero, running: 2, success: 1, failed: 1 },
        { pool: pool.name, name: "refunds", ...zero, canceled: 1 },
      ]);
      expect(await admin.workflowCounts(pool.name)).toEqual(counts);
      expect(await admin.workflowCounts("other-pool")).toEqual([]);
    });

    test("a run's detail: args, result, journal pages, child runs, events taken and waiting, and when a sleep is due", async () => {
      const t = await ctx();
      const { wf, pool } = await someRuns(t);
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      await wf.sendEvent("o-wait", "other", { note: "<b>not taken</b>" });
      const parent = (await admin.workflowRun("o-parent"))!;
      expect(parent.run).toMatchObject({ workflowId: "o-parent", state: "success", args: { mode: "child" }, result: 7, deadline: null });
      expect(parent.steps).toMatchObject([{ n: 0, kind: "workflow", name: "child", state: "success", result: 7 }]);
      expect(parent.children.items.map((c) => c.workflowId)).toEqual([parent.steps[0]!.childId]);
      expect(parent.children.items[0]).toMatchObject({ parentId: "o-parent", name: "child" });
      const child = (await admin.workflowRun(parent.steps[0]!.childId!))!;
      expect(child.run).toMatchObject({ parentId: "o-parent", parentStep: 0, args: 7 });

      // Its first advance ran (and its sleep started) when the pool was first stepped, at T0 + 3000.
      const sleeping = (await admin.workflowRun("o-sleep"))!;
      expect(sleeping.steps).toMatchObject([{ n: 0, kind: "sleep", state: "running", wakeAt: T0 + 3000 + 60_000 }]);

      const waiting = (await admin.workflowRun("o-wait"))!;
      expect(waiting.events).toMatchObject([{ seq: 1, name: "other", payload: { note: "<b>not taken</b>" }, consumedStep: null }]);
      await wf.sendEvent("o-wait", "go", 5);
      await drain(pool);
      const done = (await admin.workflowRun("o-wait"))!;
      expect(done.run).toMatchObject({ state: "success", result: { kind: "event", value: 5 } });
      expect(done.events.map((e) => [e.seq, e.name, e.consumedStep])).toEqual([
        [2, "go", 0],
        [1, "other", null],
      ]);

      const failed = (await admin.workflowRun("o-fail"))!;
      expect(failed.run.error).toMatch(/it broke\non two lines/);
      expect(await admin.workflowRun("no-such-run")).toBeNull();
    });

    test("a long journal is read in pages", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const flow = wf.define("many", async (step) => {
        for (let i = 0; i < 7; i++) step.now();
        await step.sleep(0);
      });
      const id = await wf.start(flow, null);
      await drain(pool);
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const first = (await admin.workflowRun(id, { stepsLimit: 3 }))!;
      expect(first.steps.map((s) => s.n)).toEqual([0, 1, 2]);
      expect(first.nextStep).toBe(3);
      const last = (await admin.workflowRun(id, { stepsFrom: 6, stepsLimit: 3 }))!;
      expect(last.steps.map((s) => [s.n, s.kind])).toEqual([
        [6, "now"],
        [7, "sleep"],
      ]);
      expect(last.nextStep).toBeNull();
    });

    test("bad filters and options are refused, naming the field", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      await expect(admin.workflows({ state: "done" as never })).rejects.toThrow(/state.*must be one of running/);
      await expect(admin.workflows({ limit: 0 })).rejects.toThrow(/limit/);
      await expect(admin.workflows({ limit: 501 })).rejects.toThrow(/limit/);
      await expect(admin.workflows({ createdAfter: 10, createdBefore: 10 })).rejects.toThrow(/createdBefore.*after createdAfter/);
      await expect(admin.workflows({ createdAfter: Number.NaN })).rejects.toThrow(/createdAfter/);
      await expect(admin.workflows({ cursor: "not-a-cursor" })).rejects.toThrow(/cursor/);
      await expect(admin.workflows({ cursor: Buffer.from('[1,"bad id"]').toString("base64url") })).rejects.toThrow(/cursor/);
      await expect(admin.workflows({ colour: "red" } as never)).rejects.toThrow(/colour/);
      await expect(admin.workflows({ name: "" })).rejects.toThrow(/name/);
      await expect(admin.workflowCounts("bad pool!")).rejects.toThrow(/pool/);
      await expect(admin.workflowRun("bad id")).rejects.toThrow(/id/);
      await expect(admin.workflowRun("x", { stepsLimit: 1001 })).rejects.toThrow(/stepsLimit/);
      await expect(admin.workflowRun("x", { from: 1 } as never)).rejects.toThrow(/from/);
    });
  });
}

/** Newest first: by creation time, then id, both descending. */
function byNewest(items: WorkflowSummary[]): (a: string, b: string) => number {
  const at = new Map(items.map((r) => [r.workflowId, r.createdAt]));
  return (a, b) => at.get(b)! - at.get(a)! || (a < b ? 1 : a > b ? -1 : 0);
}
