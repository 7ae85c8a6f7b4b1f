/**
 * The dashboard's chart data on each store: live samples (rates between samples, waits),
 * and the past filled from the store's rows when sampling starts, with exact values on a
 * ManualClock.
 */
import { afterEach, describe, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import { Sampler } from "../../src/dashboard/sampler.js";
import { getJson, serveDashboard, type ServedDashboard } from "../helpers/dashboard.js";
import type { StoreHarness } from "./harness.js";
import { deferred, useTestContext } from "./context.js";

export function defineDashboardChartTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("dashboard: chart", () => {
    const ctx = useTestContext(harness);
    const served: ServedDashboard[] = [];
    afterEach(async () => {
      for (const s of served.splice(0)) await s.close();
    });

    test("chart series: attempts started and work finished per second between samples, their mean wait, and the oldest due work's wait", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "jobs" });
      const job = pool.defineAction("job", () => 1);
      const errors: unknown[] = [];
      const sampler = new Sampler(t.driver as never, t.clock, (e) => errors.push(e));
      await sampler.sample();
      // The first sample fills the chart from the store's rows: this store has none yet.
      expect(sampler.series("jobs").t).toEqual([]);
      await pool.enqueueActionBatch(job, [{}, {}, {}, {}]);
      t.clock.advance(500);
      await pool.runOnce();
      const waiting = await pool.enqueueAction(job, {});
      t.clock.advance(1500);
      await sampler.sample();
      // The four waited 500 ms each; the fifth, enqueued after them, is still waiting.
      expect(sampler.series("jobs")).toEqual({ t: [t.clock.now()], started: [2], finished: [2], waitMs: [1500], startWaitMs: [500] });
      t.clock.advance(1);
      await pool.runOnce();
      t.clock.advance(999);
      await sampler.sample();
      const s = sampler.series("jobs");
      expect(s.started).toEqual([2, 1]);
      expect(s.finished).toEqual([2, 1]);
      expect(s.waitMs).toEqual([1500, 0]);
      expect(s.startWaitMs).toEqual([500, 1501]);
      expect(sampler.series(null)).toEqual(s);
      expect(sampler.series("other")).toEqual({ t: [], started: [], finished: [], waitMs: [], startWaitMs: [] });
      expect(errors).toEqual([]);
      expect((await workpoolAdmin(t.h.store).get(waiting))!.resultKind).toBe("success");
      // Samples older than 15 minutes are dropped.
      t.clock.advance(15 * 60_000 + 1);
      await sampler.sample();
      expect(sampler.series("jobs").t).toEqual([t.clock.now()]);
    });

    test("chart history: the first sample fills the last 15 minutes from the store's rows, in 10 s steps", async () => {
      const t = await ctx();
      const from = t.clock.now();
      const pool = t.pool({ name: "jobs" });
      const job = pool.defineAction("job", () => 1);
      const flaky = pool.defineAction("flaky", () => {
        throw new Error("again later");
      });
      const gate = deferred();
      const hanging = deferred();
      const hang = pool.defineAction("hang", async () => {
        hanging.resolve();
        await gate.promise;
      });
      // Started and finished at the window's start: outside (from, now].
      await pool.enqueueAction(job, {});
      await pool.runOnce();
      // Two waited 10 s and started and finished at the end of the first step, which includes its end.
      await pool.enqueueActionBatch(job, [{}, {}]);
      t.clock.advance(10_000);
      await pool.runOnce();
      // Second step: one started, failed and waits to retry (a start, no wait counted); one started 1 s after it was due and runs on.
      await pool.enqueueAction(flaky, {}, { retry: { maxAttempts: 2, initialBackoffMs: 3_600_000, base: 1 } });
      t.clock.advance(5_000);
      await pool.runOnce();
      await pool.enqueueAction(hang, {});
      t.clock.advance(1_000);
      const running = pool.runOnce();
      await hanging.promise;
      // Last step: one started and finished at once, 1 ms before the sample.
      t.clock.advance(900_000 - 16_000 - 1);
      const other = t.pool({ name: "other" });
      await other.enqueueAction(
        other.defineAction("job", () => 1),
        {},
      );
      await other.runOnce();
      t.clock.advance(1);

      const sampler = new Sampler(t.driver as never, t.clock, (e) => {
        throw e;
      });
      await sampler.sample();
      const steps = Array.from({ length: 90 }, (_, i) => from + (i + 1) * 10_000);
      const at = (values: Record<number, number>, rest: number | null) => steps.map((_, i) => values[i] ?? rest);
      expect(sampler.series("jobs")).toEqual({
        t: steps,
        started: at({ 0: 0.2, 1: 0.2 }, 0),
        finished: at({ 0: 0.2 }, 0),
        waitMs: steps.map(() => null),
        startWaitMs: at({ 0: 10_000, 1: 1_000 }, null),
      });
      expect(sampler.series("other")).toEqual({
        t: steps,
        started: at({ 89: 0.1 }, 0),
        finished: at({ 89: 0.1 }, 0),
        waitMs: steps.map(() => null),
        startWaitMs: at({ 89: 0 }, null),
      });
      expect(sampler.series(null)).toEqual({
        t: steps,
        started: at({ 0: 0.2, 1: 0.2, 89: 0.1 }, 0),
        finished: at({ 0: 0.2, 89: 0.1 }, 0),
        waitMs: steps.map(() => null),
        startWaitMs: at({ 0: 10_000, 1: 1_000, 89: 0 }, null),
      });

      // The page's first read of the chart already has the filled past.
      const s = await serveDashboard({ store: t.h.store, clock: t.clock });
      served.push(s);
      expect(await getJson(s.url, "api/series?pool=jobs")).toEqual({ status: 200, body: sampler.series("jobs") });

      // Live samples go on from there; after a pause, the next sample fills the gap in 10 s steps, the last shorter.
      t.clock.advance(1_000);
      await sampler.sample();
      expect(sampler.series("jobs").t.slice(-1)).toEqual([from + 901_000]);
      expect(sampler.series("jobs").waitMs.slice(-1)).toEqual([0]);
      sampler.stop();
      t.clock.advance(5_000);
      gate.resolve();
      await running;
      t.clock.advance(20_000);
      await sampler.sample();
      const jobs = sampler.series("jobs");
      expect(jobs.t.slice(-4)).toEqual([from + 901_000, from + 911_000, from + 921_000, from + 926_000]);
      // The hanging work finished 5 s into the gap.
      expect(jobs.finished.slice(-3)).toEqual([0.1, 0, 0]);
      expect(jobs.started.slice(-3)).toEqual([0, 0, 0]);
      expect(jobs.waitMs.slice(-3)).toEqual([null, null, null]);
      // Points older than 15 minutes are gone: 88 filled first, 1 sampled, 3 filled after the pause.
      expect(jobs.t[0]).toBe(from + 30_000);
      expect(jobs.t).toHaveLength(92);
    });
  });
}
