/**
 * Events and logs (enqueued, started, completed, report) filtered by logLevel, and
 * retention of finished work.
 */
import { describe, expect, test } from "vitest";
import type { CompletedEvent, ReportEvent, StartedEvent } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext } from "./context.js";

export function defineEventsRetentionTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("events, logs and retention", () => {
    const ctx = useTestContext(harness);

    test("enqueued, started (with lag) and completed events are emitted and logged as JSON", async () => {
      const t = await ctx();
      const pool = t.pool({ logLevel: "INFO" });
      const events: string[] = [];
      let started: StartedEvent | undefined;
      let completed: CompletedEvent | undefined;
      pool.on("enqueued", (e) => events.push(e.event));
      pool.on("started", (e) => {
        events.push(e.event);
        started = e;
      });
      pool.on("completed", (e) => {
        events.push(e.event);
        completed = e;
      });
      const a = pool.defineAction("a", () => 1);
      const id = await pool.enqueueAction(a, {});
      t.clock.advance(250);
      await pool.runOnce();
      expect(events).toEqual(["enqueued", "started", "completed"]);
      expect(started).toMatchObject({ workId: id, fnName: "a", attempt: 1, startLagMs: 250 });
      expect(completed).toMatchObject({ workId: id, status: "success", attempts: 1, lagSinceEnqueuedMs: 250 });
      const logged = t.logger.lines.filter((l) => l.text.startsWith("{")).map((l) => JSON.parse(l.text).event);
      expect(logged).toEqual(["enqueued", "started", "completed"]);
    });

    test("logLevel filters logs but not listeners; configure() changes it for the pool", async () => {
      const t = await ctx();
      const pool = t.pool({ logLevel: "WARN" });
      let heard = 0;
      pool.on("completed", () => heard++);
      const a = pool.defineAction("a", () => 1);
      await pool.enqueueAction(a, {});
      await pool.runOnce();
      expect(heard).toBe(1);
      expect(t.logger.lines.filter((l) => l.text.includes('"event"'))).toHaveLength(0);
      await pool.configure({ logLevel: "DEBUG" });
      await pool.enqueueAction(a, {});
      await pool.runOnce();
      expect(t.logger.matching('"event":"completed"')).toHaveLength(1);
    });

    test("the leader writes a periodic report with counts and rates", async () => {
      const t = await ctx();
      const pool = t.pool({ reportIntervalMs: 60_000, maxParallelism: 10 });
      const reports: ReportEvent[] = [];
      pool.on("report", (r) => reports.push(r));
      await pool.runOnce(); // baseline
      const ok = pool.defineAction("ok", () => 1);
      const bad = pool.defineAction("bad", () => {
        throw new Error("x");
      });
      await pool.enqueueActionBatch(ok, [1, 2, 3]);
      await pool.enqueueAction(bad, {}, { retry: { maxAttempts: 2, initialBackoffMs: 1, base: 1 } });
      await pool.runOnce();
      t.clock.advance(10);
      await pool.runOnce();
      const toCancel = await pool.enqueueAction(ok, {}, { runAfter: 1_000_000 });
      await pool.cancel(toCancel);
      await pool.enqueueActionBatch(ok, [1, 2], { runAfter: 1 });
      t.clock.advance(60_000);
      await pool.runOnce();
      expect(reports).toHaveLength(1);
      expect(reports[0]).toMatchObject({
        event: "report",
        completed: 5,
        succeeded: 3,
        failed: 1,
        retries: 1,
        canceled: 1,
        running: 0,
        backlog: 2,
        failureRate: 2 / 5,
        permanentFailureRate: 1 / 4,
      });
    });

    test("finished work keeps its result for retentionMs, then is deleted", async () => {
      const t = await ctx();
      const pool = t.pool({ retentionMs: 10_000 });
      const a = pool.defineAction("a", () => "r");
      const id = await pool.enqueueAction(a, {});
      await pool.runOnce();
      t.clock.advance(9_999);
      await pool.runOnce();
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: "r" } });
      t.clock.advance(2);
      const r = await pool.runOnce();
      expect(r.deleted).toBe(1);
      expect(await pool.status(id)).toEqual({ state: "finished" });
    });
  });
}
