/**
 * The admin's Prometheus metrics: gauges read from the store at scrape time, counters and
 * histograms from the events of the pools this process registered with observe(); the
 * registry merges with an app's own.
 */
import { Counter, Registry } from "prom-client";
import { describe, expect, test } from "vitest";
import { METRIC_NAMES, workpoolAdmin } from "../../src/admin/index.js";
import { NonRetryableError } from "../../src/index.js";
import { parseExposition } from "../helpers/prometheus.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext, withDriver } from "./context.js";

export function defineAdminMetricsTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("admin: metrics", () => {
    const ctx = useTestContext(harness);

    test("metrics() exposes per-pool gauges from the store and the observed pools' counters and histograms", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const pool = t.pool({ name: "mail", maxParallelism: 5 });
      const stop = admin.observe(pool);
      const ok = pool.defineAction("send", () => 1);
      const timed = pool.defineAction("timed", () => {
        t.clock.advance(40);
        return 1;
      });
      let tries = 0;
      const flaky = pool.defineAction("flaky", () => {
        if (++tries < 3) throw new Error("again");
        throw new NonRetryableError("give up");
      });
      // One attempt that runs 40 ms on the test's clock; the others take no time.
      await pool.enqueueAction(timed, {});
      await pool.runOnce();
      await pool.enqueueActionBatch(ok, [1, 2, 3]);
      await pool.enqueueAction(flaky, {}, { retry: { maxAttempts: 5, initialBackoffMs: 10, base: 1 } });
      for (let i = 0; i < 4; i++) {
        await pool.runOnce();
        t.clock.advance(20);
      }
      await pool.enqueueAction(ok, {}, { runAfter: 1_000_000 });
      await pool.enqueueAction(ok, {});
      t.clock.advance(2500);
      // Another process's pool: in the gauges (read from the store), not in the counters.
      const other = t.pool({ name: "other" });
      await other.enqueueAction(
        other.defineAction("x", () => 1),
        {},
      );

      const { samples, types } = parseExposition(await admin.metrics());
      expect(samples.get(`${METRIC_NAMES.pending}{pool="mail"}`)).toBe(2);
      expect(samples.get(`${METRIC_NAMES.pending}{pool="other"}`)).toBe(1);
      expect(samples.get(`${METRIC_NAMES.retrying}{pool="mail"}`)).toBe(0);
      expect(samples.get(`${METRIC_NAMES.running}{pool="mail"}`)).toBe(0);
      expect(samples.get(`${METRIC_NAMES.oldestPendingAge}{pool="mail"}`)).toBe(2.5);
      expect(samples.get(`${METRIC_NAMES.maxParallelism}{pool="mail"}`)).toBe(5);
      expect(samples.get(METRIC_NAMES.storeUp)).toBe(1);
      expect(samples.get(`${METRIC_NAMES.enqueued}{handler="send",pool="mail"}`)).toBe(5);
      expect(samples.get(`${METRIC_NAMES.enqueued}{handler="flaky",pool="mail"}`)).toBe(1);
      expect(samples.get(`${METRIC_NAMES.started}{handler="send",pool="mail"}`)).toBe(3);
      expect(samples.get(`${METRIC_NAMES.started}{handler="flaky",pool="mail"}`)).toBe(3);
      expect(samples.get(`${METRIC_NAMES.finished}{handler="send",kind="success",pool="mail"}`)).toBe(3);
      expect(samples.get(`${METRIC_NAMES.finished}{handler="flaky",kind="failed",pool="mail"}`)).toBe(1);
      expect(samples.get(`${METRIC_NAMES.retries}{handler="flaky",pool="mail"}`)).toBe(2);
      expect(samples.get(`${METRIC_NAMES.attemptDuration}_count{pool="mail"}`)).toBe(7);
      expect(samples.get(`${METRIC_NAMES.attemptDuration}_sum{pool="mail"}`)).toBeCloseTo(0.04, 6);
      expect(samples.get(`${METRIC_NAMES.attemptDuration}_bucket{le="0.025",pool="mail"}`)).toBe(6);
      expect(samples.get(`${METRIC_NAMES.attemptDuration}_bucket{le="0.05",pool="mail"}`)).toBe(7);
      expect(samples.get(`${METRIC_NAMES.startDelay}_count{pool="mail"}`)).toBe(7);
      expect(samples.get(`${METRIC_NAMES.started}{handler="timed",pool="mail"}`)).toBe(1);
      expect([...samples.keys()].some((k) => k.includes('pool="other"') && k.startsWith(METRIC_NAMES.enqueued))).toBe(false);
      expect(types.get(METRIC_NAMES.finished)).toBe("counter");
      expect(types.get(METRIC_NAMES.attemptDuration)).toBe("histogram");
      expect(types.get(METRIC_NAMES.pending)).toBe("gauge");

      // Merged with the app's registry; after stop(), the pool's events are no longer counted.
      const app = new Registry();
      new Counter({ name: "app_requests_total", help: "requests", registers: [app] }).inc(3);
      const merged = parseExposition(await Registry.merge([app, admin.registry]).metrics()).samples;
      expect(merged.get("app_requests_total")).toBe(3);
      expect(merged.get(`${METRIC_NAMES.pending}{pool="mail"}`)).toBe(2);
      stop();
      await pool.enqueueAction(ok, {});
      expect(parseExposition(await admin.metrics()).samples.get(`${METRIC_NAMES.enqueued}{handler="send",pool="mail"}`)).toBe(5);
    });

    test("a scrape whose store read fails answers workpool_store_up 0 and no pool gauges", async () => {
      const t = await ctx();
      const failing = withDriver(t.h.store, { readPools: () => Promise.reject(new Error("store unreachable")) });
      const admin = workpoolAdmin(failing, { clock: t.clock });
      const errors: unknown[] = [];
      const original = console.error;
      console.error = (...args: unknown[]) => void errors.push(args);
      try {
        const { samples } = parseExposition(await admin.metrics());
        expect(samples.get(METRIC_NAMES.storeUp)).toBe(0);
        expect([...samples.keys()].filter((k) => k.startsWith(METRIC_NAMES.pending))).toEqual([]);
      } finally {
        console.error = original;
      }
      expect(errors).toHaveLength(1);
    });
  });
}
