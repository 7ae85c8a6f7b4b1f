/**
 * Guarantee 13: at most `limit` attempts start in any `periodMs` window, per pool and per
 * key, across every worker; waiting for the limit holds no slot and is no attempt, and
 * the claim says when the window lets the next start in. Three pool instances, each on
 * its own store connection, claim at once on one ManualClock; the handlers record their
 * own start times.
 */
import { describe, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import type { ReportEvent, Store, Workpool } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext, type TestContext } from "./context.js";

/** The most starts in any window [s, s + periodMs) beginning at a start s. */
function busiestWindow(starts: readonly number[], periodMs: number): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + periodMs) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

/** Three instances of pool `name` on three store connections (the test's and two more). */
async function threeWorkers<Tx>(
  t: TestContext<Tx>,
  harness: StoreHarness<Tx>,
  opened: Store<Tx>[],
  options: Parameters<TestContext<Tx>["pool"]>[0],
): Promise<Workpool<Tx>[]> {
  const stores = [t.h.store, harness.openAnotherStore(t.h), harness.openAnotherStore(t.h)];
  opened.push(stores[1]!, stores[2]!);
  return stores.map((s) => t.pool(options, s));
}

/**
 * One runOnce() of every worker: at once, except on SQLite, where one thread cannot wait for
 * the file's write lock while another of its connections holds it across an await: there
 * they take turns (the lock serialises their claims anyway).
 */
async function step<Tx>(harness: StoreHarness<Tx>, pools: readonly Workpool<Tx>[]): Promise<void> {
  if (harness.name !== "sqlite") {
    await Promise.all(pools.map((p) => p.runOnce()));
    return;
  }
  for (const p of pools) await p.runOnce();
}

export function defineRateLimitTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("rate limits", () => {
    const ctx = useTestContext(harness);

    test("three workers never start more than rateLimit.limit attempts in any window; held work stays pending, with no attempt", async () => {
      const t = await ctx();
      const opened: Store<Tx>[] = [];
      try {
        const pools = await threeWorkers(t, harness, opened, { name: "rl", maxParallelism: 50, rateLimit: { limit: 3, periodMs: 1000 } });
        const starts: number[] = [];
        const handles = pools.map((p) => p.defineAction("call", () => void starts.push(t.clock.now())));
        const ids = await pools[0]!.enqueueActionBatch(
          handles[0]!,
          Array.from({ length: 20 }, (_, i) => ({ i })),
        );
        await step(harness, pools);
        expect(starts.length).toBe(3);
        // Held back by the window: pending, never attempted, holding no slot.
        const held = await pools[0]!.statusBatch(ids);
        expect(held.filter((s) => s.state === "pending" && s.previousAttempts === 0).length).toBe(17);
        expect((await t.driver.counts("rl", t.clock.now())).running).toBe(0);
        // The claim says when the window lets the next start in.
        const claim = await t.driver.claim("rl", {
          workerId: "probe",
          clock: () => t.clock.now() + 10,
          leaseMs: 30_000,
          limit: 5,
        });
        expect(claim.claimed).toEqual([]);
        expect(claim.nextRunAt).toBe(starts[0]! + 1000);
        while (starts.length < 20) {
          t.clock.advance(250);
          await step(harness, pools);
        }
        expect(busiestWindow(starts, 1000)).toBe(3);
        // 20 starts at 3 a second take six more windows.
        expect(Math.max(...starts) - Math.min(...starts)).toBeGreaterThanOrEqual(6000);
      } finally {
        for (const s of opened) await s.close();
      }
    });

    test("keyRateLimit limits each key's starts in any window, and a key at its limit holds back no other", async () => {
      const t = await ctx();
      const opened: Store<Tx>[] = [];
      try {
        const pools = await threeWorkers(t, harness, opened, {
          name: "krl",
          maxParallelism: 50,
          keyRateLimit: { limit: 2, periodMs: 1000 },
        });
        const starts = new Map<string, number[]>();
        const handles = pools.map((p) =>
          p.defineAction("call", (_c, args: { key: string }) => {
            const list = starts.get(args.key) ?? [];
            list.push(t.clock.now());
            starts.set(args.key, list);
          }),
        );
        // The hot key's backlog first in claim order.
        await pools[0]!.enqueueActionBatch(
          handles[0]!,
          Array.from({ length: 10 }, () => ({ key: "hot" })),
          { key: "hot" },
        );
        await pools[0]!.enqueueActionBatch(
          handles[0]!,
          Array.from({ length: 4 }, () => ({ key: "cold" })),
          { key: "cold" },
        );
        await pools[0]!.enqueueAction(handles[0]!, { key: "none" });
        await step(harness, pools);
        expect(Object.fromEntries([...starts].map(([k, v]) => [k, v.length]))).toEqual({ hot: 2, cold: 2, none: 1 });
        const claim = await t.driver.claim("krl", {
          workerId: "probe",
          clock: () => t.clock.now() + 10,
          leaseMs: 30_000,
          limit: 5,
        });
        expect(claim.claimed).toEqual([]);
        expect(claim.nextRunAt).toBe(t.clock.now() + 1000);
        let total = 5;
        while (total < 15) {
          t.clock.advance(250);
          await step(harness, pools);
          total = [...starts.values()].reduce((n, v) => n + v.length, 0);
        }
        expect(busiestWindow(starts.get("hot")!, 1000)).toBe(2);
        expect(busiestWindow(starts.get("cold")!, 1000)).toBe(2);
      } finally {
        for (const s of opened) await s.close();
      }
    });

    test("the report event counts the due work a rate limit holds back", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "rr", maxParallelism: 50, reportIntervalMs: 1000, keyRateLimit: { limit: 1, periodMs: 60_000 } });
      const job = pool.defineAction("job", () => undefined);
      const reports: ReportEvent[] = [];
      pool.on("report", (e) => void reports.push(e));
      await pool.enqueueActionBatch(job, [{}, {}, {}], { key: "a" });
      await pool.enqueueActionBatch(job, [{}, {}], { key: "b" });
      await pool.enqueueAction(job, {});
      await pool.runOnce();
      t.clock.advance(1000);
      await pool.runOnce();
      expect(reports.at(-1)).toMatchObject({ backlog: 3, rateLimited: 3 });
      await pool.configure({ keyRateLimit: null, rateLimit: { limit: 3, periodMs: 60_000 } });
      await pool.enqueueActionBatch(job, [{}, {}], {});
      t.clock.advance(1000);
      await pool.runOnce();
      // Three starts in the window already: everything due is held back.
      expect(reports.at(-1)).toMatchObject({ backlog: 5, rateLimited: 5 });
    });

    test("configure({ rateLimit }) changes the limit for every worker, and null removes it", async () => {
      const t = await ctx();
      const a = t.pool({ name: "rc", maxParallelism: 50 });
      const b = t.pool({ name: "rc" });
      let started = 0;
      const job = a.defineAction("job", () => void started++);
      b.defineAction("job", () => void started++);
      await a.enqueueActionBatch(
        job,
        Array.from({ length: 10 }, (_, i) => ({ i })),
      );
      await a.configure({ rateLimit: { limit: 2, periodMs: 60_000 }, keyRateLimit: { limit: 1, periodMs: 1000 } });
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      expect((await admin.pools()).find((p) => p.name === "rc")).toMatchObject({
        rateLimit: { limit: 2, periodMs: 60_000 },
        keyRateLimit: { limit: 1, periodMs: 1000 },
      });
      await Promise.all([a.runOnce(), b.runOnce()]);
      expect(started).toBe(2);
      await b.configure({ rateLimit: null });
      await Promise.all([a.runOnce(), b.runOnce()]);
      expect(started).toBe(10);
      expect((await admin.pools()).find((p) => p.name === "rc")).toMatchObject({
        rateLimit: null,
        keyRateLimit: { limit: 1, periodMs: 1000 },
      });
    });
  });
}
