/** The driver contract, pools: the stored configuration, pause and resume, counts and report counters. */
import { describe, expect, test } from "vitest";
import type { Driver } from "../../../src/driver/driver.js";
import type { StoreHarness } from "../../conformance/harness.js";
import { claimBy, POOL, row, T0, useDriver } from "./setup.js";

const SEED = { maxParallelism: 10, logLevel: "REPORT", keyParallelism: null } as const;

/** Registers the pool tests for one store. */
export function definePoolContract<Tx>(harness: StoreHarness<Tx>): void {
  describe("pools", () => {
    const driver = useDriver(harness);

    /** The stored limit and the limit a resume restores. */
    async function limits(d: Driver<Tx>) {
      const p = (await d.readPools(T0, T0)).find((r) => r.name === POOL)!;
      return { maxParallelism: p.maxParallelism, pausedFrom: p.pausedFrom };
    }

    test("ensurePool seeds a pool once and applies only the overrides given", async () => {
      const d = await driver(3);
      expect(await d.readPoolConfig("unknown")).toBeNull();
      // Seeded by the driver factory with 3: a second seed changes nothing.
      expect(await d.ensurePool(POOL, SEED, {})).toEqual({ maxParallelism: 3, logLevel: "REPORT", keyParallelism: null });
      expect(await d.ensurePool(POOL, SEED, { logLevel: "DEBUG", keyParallelism: 2 })).toEqual({
        maxParallelism: 3,
        logLevel: "DEBUG",
        keyParallelism: 2,
      });
      expect(await d.readPoolConfig(POOL)).toEqual({ maxParallelism: 3, logLevel: "DEBUG", keyParallelism: 2 });
    });

    test("a pause keeps the limit for resume; a limit set while paused is what resume restores; setting a limit ends a pause", async () => {
      const d = await driver(10);
      await d.changePoolLimit(POOL, { pause: true });
      expect(await limits(d)).toEqual({ maxParallelism: 0, pausedFrom: 10 });
      await d.changePoolLimit(POOL, { pause: true });
      expect(await limits(d)).toEqual({ maxParallelism: 0, pausedFrom: 10 });
      await d.ensurePool(POOL, SEED, { maxParallelism: 4 });
      expect(await limits(d)).toEqual({ maxParallelism: 0, pausedFrom: 4 });
      await d.changePoolLimit(POOL, { resume: true });
      expect(await limits(d)).toEqual({ maxParallelism: 4, pausedFrom: null });
      await d.changePoolLimit(POOL, { resume: true });
      expect(await limits(d)).toEqual({ maxParallelism: 4, pausedFrom: null });
      await d.changePoolLimit(POOL, { pause: true });
      await d.changePoolLimit(POOL, { maxParallelism: 6 });
      expect(await limits(d)).toEqual({ maxParallelism: 6, pausedFrom: null });
    });

    test("counts give pending, running and the due backlog; the report counters add up", async () => {
      const d = await driver(1);
      await d.insertWork([row(T0 - 2), row(T0 - 1), row(T0 + 1000)]);
      await d.claim(POOL, claimBy("a", 10));
      expect(await d.counts(POOL, T0)).toEqual({ pending: 2, running: 1, backlog: 1 });
      expect(await d.readStats(POOL)).toEqual({ completed: 0, succeeded: 0, failed: 0, retries: 0, canceled: 0 });
      await d.transaction((ops) => ops.addStats(POOL, { completed: 2, succeeded: 1, failed: 1, retries: 3, canceled: 0 }));
      await d.transaction((ops) => ops.addStats(POOL, { completed: 1, succeeded: 0, failed: 0, retries: 0, canceled: 1 }));
      expect(await d.readStats(POOL)).toEqual({ completed: 3, succeeded: 1, failed: 1, retries: 3, canceled: 1 });
    });
  });
}
