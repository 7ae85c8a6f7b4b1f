/**
 * Workflow metrics and events on every store: a WorkflowManager emits workflowStarted,
 * workflowFinished, workflowStep and workflowReplayed on its pool once their writes
 * commit, and admin.observe(pool) counts them: runs by workflow and outcome, step
 * durations by kind, replays (time and entries), the journal at a run's end.
 */
import { describe, expect, test } from "vitest";
import { METRIC_NAMES, workpoolAdmin } from "../../src/admin/index.js";
import { NonRetryableError, type WorkpoolEvents } from "../../src/index.js";
import { StepFailedError } from "../../src/workflow/index.js";
import { parseExposition } from "../helpers/prometheus.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext, withDriver } from "./context.js";
import { advance } from "../../src/workflow/advance.js";
import { drain, workflowPool } from "./workflow-kit.js";

export function defineWorkflowMetricsTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("workflows: metrics and events", () => {
    const ctx = useTestContext(harness);

    test("runs are counted started and finished by workflow and outcome; steps by kind with their durations; the journal at the end", async () => {
      const t = await ctx();
      const { pool, wf } = workflowPool(t, { name: "orders" });
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      admin.observe(pool);
      const finished: WorkpoolEvents["workflowFinished"][] = [];
      pool.on("workflowFinished", (e) => void finished.push(e));
      // The action takes 2 s of the pool's clock.
      const charge = pool.defineAction("charge", () => {
        t.clock.advance(2000);
        return "ch_1";
      });
      const reserve = pool.defineMutation("reserve", () => 1);
      const refuse = pool.defineAction("refuse", () => {
        throw new NonRetryableError("card declined");
      });
      const receipt = wf.define("receipt", async () => "sent");
      const ok = wf.define("ok", async (step) => {
        await step.runMutation(reserve, null);
        const id = await step.runAction(charge, null);
        await step.sleep(60_000);
        return { id, receipt: await step.runWorkflow(receipt, null) };
      });
      const bad = wf.define("bad", async (step) => step.runAction(refuse, null));
      const waits = wf.define("waits", async (step) => step.awaitEvent("never"));

      const okId = await wf.start(ok, null);
      const badId = await wf.start(bad, null);
      const waitsId = await wf.start(waits, null);
      await drain(pool);
      t.clock.advance(60_000);
      await drain(pool);
      expect(await wf.cancel(waitsId)).toBe(true);
      await drain(pool);
      expect(await wf.status(okId)).toMatchObject({ state: "success" });
      expect(await wf.status(badId)).toMatchObject({ state: "failed", error: expect.stringContaining("card declined") });
      expect(await wf.status(waitsId)).toMatchObject({ state: "canceled" });

      const { samples, types } = parseExposition(await admin.metrics());
      const run = (workflow: string) => `pool="orders",workflow="${workflow}"`;
      for (const w of ["ok", "bad", "waits", "receipt"]) expect(samples.get(`${METRIC_NAMES.workflowsStarted}{${run(w)}}`)).toBe(1);
      expect(samples.get(`${METRIC_NAMES.workflowsFinished}{outcome="success",${run("ok")}}`)).toBe(1);
      expect(samples.get(`${METRIC_NAMES.workflowsFinished}{outcome="success",${run("receipt")}}`)).toBe(1);
      expect(samples.get(`${METRIC_NAMES.workflowsFinished}{outcome="failed",${run("bad")}}`)).toBe(1);
      expect(samples.get(`${METRIC_NAMES.workflowsFinished}{outcome="canceled",${run("waits")}}`)).toBe(1);
      expect(samples.get(`${METRIC_NAMES.workflowsFinished}{outcome="success",${run("bad")}}`)).toBeUndefined();
      const step = (kind: string, w: string, what: "count" | "sum") =>
        samples.get(`${METRIC_NAMES.workflowStepDuration}_${what}{kind="${kind}",${run(w)}}`);
      expect(step("mutation", "ok", "count")).toBe(1);
      expect(step("mutation", "ok", "sum")).toBe(0);
      expect(step("action", "ok", "count")).toBe(1);
      expect(step("action", "ok", "sum")).toBe(2);
      expect(step("sleep", "ok", "count")).toBe(1);
      expect(step("sleep", "ok", "sum")).toBe(60);
      expect(step("workflow", "ok", "count")).toBe(1);
      expect(step("action", "bad", "count")).toBe(1);
      // The cancel ended the wait, and the function was given that outcome.
      expect(step("event", "waits", "count")).toBe(1);
      expect(types.get(METRIC_NAMES.workflowStepDuration)).toBe("histogram");
      expect(types.get(METRIC_NAMES.workflowsFinished)).toBe("counter");

      // The journal at the end: entries and bytes as the run's row has them.
      const row = await t.driver.workflows().readRun(okId);
      expect(samples.get(`${METRIC_NAMES.workflowJournalEntries}_sum{${run("ok")}}`)).toBe(4);
      expect(samples.get(`${METRIC_NAMES.workflowJournalBytes}_sum{${run("ok")}}`)).toBe(row!.journalBytes);
      expect(row!.journalBytes).toBeGreaterThan(0);
      expect(samples.get(`${METRIC_NAMES.workflowJournalEntries}_count{${run("waits")}}`)).toBe(1);
      // Each run once, with its time from start to end on the pool's clock.
      expect(finished.map((e) => e.workflowId).sort()).toEqual([okId, badId, waitsId, expect.any(String)].sort());
      expect(finished.find((e) => e.workflowId === okId)).toMatchObject({ outcome: "success", durationMs: 62_000, journalEntries: 4 });
      expect(finished.find((e) => e.workflowId === badId)).toMatchObject({
        outcome: "failed",
        error: expect.stringContaining("card declined"),
      });
      // A run that waits on a sleep, an event or a child run is not kept in memory: the advance after the wait replays
      // (after the sleep, 3 entries; after the child run, 4). One that stays in memory is not (a first advance replays nothing).
      expect(samples.get(`${METRIC_NAMES.workflowReplayDuration}_count{${run("ok")}}`)).toBe(2);
      expect(samples.get(`${METRIC_NAMES.workflowReplayedEntries}_sum{${run("ok")}}`)).toBe(7);
      expect(samples.get(`${METRIC_NAMES.workflowReplayDuration}_count{${run("waits")}}`)).toBe(1);
      expect(samples.get(`${METRIC_NAMES.workflowReplayDuration}_count{${run("bad")}}`)).toBeUndefined();
    });

    test("a replay in another process is counted with its entries; steps given before it are not counted again", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const define = (p: ReturnType<typeof workflowPool<Tx>>) => {
        const act = p.pool.defineAction("act", (_c, i: number) => i);
        return p.wf.define("flow", async (step) => {
          for (let i = 0; i < 3; i++) await step.runAction(act, i);
          const ev = await step.awaitEvent("go");
          if (ev.kind === "event") throw new StepFailedError("stop", 4, "failed");
          return "done";
        });
      };
      const first = workflowPool(t, { name: "p" });
      const flow = define(first);
      const second = workflowPool(t, { name: "p" });
      define(second);
      admin.observe(first.pool);
      admin.observe(second.pool);
      const replays: WorkpoolEvents["workflowReplayed"][] = [];
      const steps: WorkpoolEvents["workflowStep"][] = [];
      second.pool.on("workflowReplayed", (e) => void replays.push(e));
      for (const p of [first, second]) p.pool.on("workflowStep", (e) => void steps.push(e));
      const id = await first.wf.start(flow, null);
      await drain(first.pool);
      expect(steps.map((s) => [s.n, s.kind])).toEqual([
        [0, "action"],
        [1, "action"],
        [2, "action"],
      ]);
      // The other process takes the event and drives the run on: it replays the journal.
      await second.wf.sendEvent(id, "go", null);
      await drain(second.pool);
      expect(await second.wf.status(id)).toMatchObject({ state: "failed" });
      expect(replays).toEqual([
        { event: "workflowReplayed", pool: "p", workflowId: id, workflow: "flow", entries: 4, durationMs: expect.any(Number) },
      ]);
      expect(steps.map((s) => [s.n, s.kind, s.outcome])).toEqual([
        [0, "action", "success"],
        [1, "action", "success"],
        [2, "action", "success"],
        [3, "event", "event"],
      ]);
      const { samples } = parseExposition(await admin.metrics());
      const run = `pool="p",workflow="flow"`;
      expect(samples.get(`${METRIC_NAMES.workflowReplayDuration}_count{${run}}`)).toBe(1);
      expect(samples.get(`${METRIC_NAMES.workflowReplayedEntries}_sum{${run}}`)).toBe(4);
      expect(samples.get(`${METRIC_NAMES.workflowStepDuration}_count{kind="action",${run}}`)).toBe(3);
      expect(samples.get(`${METRIC_NAMES.workflowStepDuration}_count{kind="event",${run}}`)).toBe(1);
      expect(samples.get(`${METRIC_NAMES.workflowsStarted}{${run}}`)).toBe(1);
      expect(samples.get(`${METRIC_NAMES.workflowsFinished}{outcome="failed",${run}}`)).toBe(1);
    });

    test("a second start of one workflowId emits nothing; an advance another writer beat emits its steps once, when it commits", async () => {
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
      const seen: string[] = [];
      for (const name of ["workflowStarted", "workflowFinished", "workflowStep"] as const)
        pool.on(name, (e) => void seen.push(`${e.event} ${e.workflowId}`));
      const act = pool.defineAction("act", () => 41);
      const flow = wf.define("flow", async (step) => (await step.runAction(act, null)) + 1);
      id = await wf.start(flow, null, { workflowId: "once" });
      expect(await wf.start(flow, null, { workflowId: "once" })).toBe("once");
      await pool.runOnce(); // the first advance: the step's work
      wf.internals.executions.drop(id); // as in another process: no execution kept here
      await pool.runOnce(); // the step runs; its outcome waits for an advance
      expect(seen).toEqual(["workflowStarted once"]);
      armed = true;
      await advance(wf.internals, id);
      expect(await wf.status(id)).toMatchObject({ state: "success", result: 42 });
      expect(seen).toEqual(["workflowStarted once", "workflowStep once", "workflowFinished once"]);
    });

    test("a run's end written in a transaction that then fails is not reported; the end that commits is, once", async () => {
      const t = await ctx();
      let failWrites = false;
      // The journal write that follows the run's end fails once: the whole write rolls back.
      const store = withDriver(t.h.store, {
        workflows(real, tx) {
          const ops = real.workflows(tx);
          return {
            ...ops,
            insertSteps(rows) {
              if (failWrites) {
                failWrites = false;
                throw new Error("disk full");
              }
              return ops.insertSteps(rows);
            },
          };
        },
      });
      const { pool, wf } = workflowPool(t, {}, store);
      const finished: string[] = [];
      pool.on("workflowFinished", (e) => void finished.push(e.outcome));
      const act = pool.defineAction("act", () => 1);
      const flow = wf.define("flow", async (step) => (await step.runAction(act, null)) + 1);
      const id = await wf.start(flow, null);
      await pool.runOnce(); // the first advance: the step's work
      failWrites = true;
      await drain(pool); // the step ends; going on in memory fails, and an advance ends the run
      expect(failWrites).toBe(false);
      expect(await wf.status(id)).toMatchObject({ state: "success", result: 2 });
      expect(finished).toEqual(["success"]);
    });
  });
}
