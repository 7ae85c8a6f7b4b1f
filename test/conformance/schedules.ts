/**
 * Guarantee 12: a cron schedule enqueues each tick exactly once, whatever the number of
 * workers (each on its own store connection), their clock skew, updates of the schedule
 * and pauses of every worker; a tick's work is ordinary work. Time is a ManualClock.
 */
import { describe, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import { ManualClock, type EnqueuedEvent, type Store, type Workpool } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { deferred, T0, useTestContext, withDriver } from "./context.js";

/**
 * One runOnce() of every worker: at once, except on SQLite, where one thread cannot wait for
 * the file's write lock while another of its connections holds it across an await.
 */
async function step<Tx>(harness: StoreHarness<Tx>, pools: readonly Workpool<Tx>[]): Promise<void> {
  if (harness.name !== "sqlite") {
    await Promise.all(pools.map((p) => p.runOnce()));
    return;
  }
  for (const p of pools) await p.runOnce();
}

/** Collects the runAt of every work the pools report enqueued. */
function enqueuedTicks<Tx>(pools: readonly Workpool<Tx>[]): number[] {
  const ticks: number[] = [];
  for (const p of pools) p.on("enqueued", (e: EnqueuedEvent) => void ticks.push(e.runAt));
  return ticks;
}

export function defineScheduleTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("cron schedules", () => {
    const ctx = useTestContext(harness);

    test("a 1-second cron with three workers, one clock 700 ms ahead, enqueues one work per tick and none twice", async () => {
      const t = await ctx();
      const opened: Store<Tx>[] = [harness.openAnotherStore(t.h), harness.openAnotherStore(t.h)];
      try {
        const skewed = new ManualClock(T0 + 700);
        const pools = [t.pool({ name: "cron" }), t.pool({ name: "cron" }, opened[0]), t.pool({ name: "cron", clock: skewed }, opened[1])];
        const ran: number[] = [];
        const handles = pools.map((p) => p.defineAction("tick", (_c, args: { n: number }) => void ran.push(args.n)));
        const ticks = enqueuedTicks(pools);
        await pools[0]!.schedule("every-second", { cron: "* * * * * *" }, handles[0]!, { n: 1 });
        // Half-second steps: the skewed worker sees each tick 700 ms before the others do.
        for (let i = 0; i < 12; i++) {
          t.clock.advance(500);
          skewed.advance(500);
          await step(harness, pools);
        }
        // runAt is the tick, whichever clock enqueued it.
        expect([...ticks].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6].map((s) => T0 + s * 1000));
        expect(await harness.countWorkRows(t.h)).toBe(6);
        expect(ran.length).toBeGreaterThanOrEqual(5);
        const [info] = await pools[1]!.schedules();
        expect(info).toMatchObject({ id: "every-second", spec: { cron: "* * * * * *", timezone: "UTC" }, catchUp: "latest" });
        expect(info!.lastTick).toBe(Math.max(...ticks));
        expect(info!.nextRunAt).toBe(info!.lastTick! + 1000);
        expect(await pools[1]!.status(info!.lastWorkId!)).toMatchObject({ state: expect.any(String) });
      } finally {
        for (const s of opened) await s.close();
      }
    });

    test("a tick's work knows its tick (ctx.scheduledAt, ctx.scheduleId), also on a retry that moved its runAt", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "ticks" });
      const seen: { attempt: number; scheduledAt: number | null; scheduleId: string | null }[] = [];
      const job = pool.defineAction("job", (c) => {
        seen.push({ attempt: c.attempt, scheduledAt: c.scheduledAt, scheduleId: c.scheduleId });
        if (c.attempt === 1) throw new Error("transient");
      });
      const write = pool.defineMutation(
        "write",
        (c) => void seen.push({ attempt: c.attempt, scheduledAt: c.scheduledAt, scheduleId: c.scheduleId }),
      );
      await pool.schedule("nightly", { cron: "0 3 * * *" }, job, {}, { retry: { maxAttempts: 2, initialBackoffMs: 60_000, base: 2 } });
      const tick = Date.UTC(2030, 0, 1, 3);
      t.clock.set(tick + 10);
      await pool.runOnce();
      t.clock.advance(60_000);
      await pool.runOnce();
      expect(seen).toEqual([
        { attempt: 1, scheduledAt: tick, scheduleId: "nightly" },
        { attempt: 2, scheduledAt: tick, scheduleId: "nightly" },
      ]);
      // Work no schedule enqueued has no tick.
      await pool.enqueueMutation(write, {});
      await pool.runOnce();
      expect(seen[2]).toEqual({ attempt: 1, scheduledAt: null, scheduleId: null });
    });

    test("three workers that read a due schedule at the same moment enqueue its tick once", async () => {
      const t = await ctx();
      const opened: Store<Tx>[] = [harness.openAnotherStore(t.h), harness.openAnotherStore(t.h)];
      try {
        // Each worker's first read of the due schedules waits until all three have read.
        const all = deferred();
        let arrived = 0;
        const racing = [t.h.store, ...opened].map((store) => {
          let first = true;
          return withDriver(store, {
            dueSchedules: async (real, pool, now, limit) => {
              const read = await real.dueSchedules(pool, now, limit);
              if (first) {
                first = false;
                if (++arrived === 3) all.resolve();
                await all.promise;
              }
              return read;
            },
          });
        });
        // Paused: the race is about enqueuing, nothing runs.
        const pools = racing.map((store) => t.pool({ name: "race", maxParallelism: 0 }, store));
        const handles = pools.map((p) => p.defineAction("tick", () => undefined));
        const ticks = enqueuedTicks(pools);
        await pools[0]!.schedule("s", { cron: "* * * * * *" }, handles[0]!, {});
        t.clock.advance(1000);
        // The schedule pass of each worker alone (runOnce() would also run maintenance, whose
        // transactions on SQLite hold the file's lock across awaits, which other connections
        // of one thread cannot wait for).
        const passes = pools.map((p) => (p as unknown as { worker: { scheduler: { tick(): Promise<unknown> } } }).worker.scheduler.tick());
        await Promise.all(passes);
        expect(arrived).toBe(3);
        expect(ticks).toEqual([T0 + 1000]);
        expect(await harness.countWorkRows(t.h)).toBe(1);
      } finally {
        for (const s of opened) await s.close();
      }
    });

    test("updating a schedule changes the next ticks' work; a new cron moves the next tick; unschedule stops it", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "upd" });
      const seen: string[] = [];
      const job = pool.defineAction("job", (_c, args: { v: string }) => void seen.push(args.v));
      await pool.schedule("s", { cron: "* * * * * *" }, job, { v: "a" });
      t.clock.advance(1000);
      await pool.runOnce();
      // The same cron again (as every process does at start): the next tick is kept.
      await pool.schedule("s", { cron: "* * * * * *" }, job, { v: "b" }, { priority: 5 });
      expect((await pool.schedules())[0]!.nextRunAt).toBe(T0 + 2000);
      t.clock.advance(1000);
      await pool.runOnce();
      await pool.schedule("s", { cron: "*/10 * * * * *" }, job, { v: "c" });
      expect((await pool.schedules())[0]).toMatchObject({ spec: { cron: "*/10 * * * * *" }, nextRunAt: T0 + 10_000, args: { v: "c" } });
      t.clock.advance(1000);
      await pool.runOnce();
      expect(seen).toEqual(["a", "b"]);
      t.clock.advance(7000);
      await pool.runOnce();
      expect(seen).toEqual(["a", "b", "c"]);
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      expect(await admin.schedules()).toEqual([
        expect.objectContaining({ pool: "upd", id: "s", nextRunAt: T0 + 20_000, lastTick: T0 + 10_000, handler: "job" }),
      ]);
      expect(await admin.schedules("other")).toEqual([]);
      await expect(admin.schedules("")).rejects.toMatchObject({ field: "pool" });
      expect(await pool.unschedule("s")).toBe(true);
      expect(await pool.unschedule("s")).toBe(false);
      t.clock.advance(60_000);
      await pool.runOnce();
      expect(seen).toEqual(["a", "b", "c"]);
      expect(await pool.schedules()).toEqual([]);
    });

    test('after every worker was down, catchUp "latest" enqueues the latest missed tick once and "none" skips them', async () => {
      const t = await ctx();
      const pool = t.pool({ name: "catch" });
      const ran: string[] = [];
      const job = pool.defineMutation("job", (_c, args: { s: string }) => void ran.push(args.s));
      await pool.schedule("latest", { cron: "0 * * * *" }, job, { s: "latest" });
      await pool.schedule("none", { cron: "0 * * * *" }, job, { s: "none" }, { catchUp: "none" });
      const ticks = enqueuedTicks([pool]);
      // Down for ten and a half hours.
      t.clock.advance(10.5 * 3600_000);
      await pool.runOnce();
      expect(ran).toEqual(["latest"]);
      expect(ticks).toEqual([T0 + 10 * 3600_000]);
      const byId = Object.fromEntries((await pool.schedules()).map((s) => [s.id, s]));
      expect(byId.none).toMatchObject({ lastTick: null, nextRunAt: T0 + 11 * 3600_000 });
      expect(byId.latest).toMatchObject({ lastTick: T0 + 10 * 3600_000, nextRunAt: T0 + 11 * 3600_000 });
      // On time again: both run.
      t.clock.advance(0.5 * 3600_000);
      await pool.runOnce();
      expect(ran.sort()).toEqual(["latest", "latest", "none"]);
    });

    test("ticks follow the time zone across daylight saving changes, once each", async () => {
      const t = await ctx();
      // 2030-03-08, two days before clocks in New York go forward; 02:30 does not exist on the 10th.
      const clock = new ManualClock(Date.UTC(2030, 2, 8));
      const pool = t.pool({ name: "dst", clock });
      const gapPool = t.pool({ name: "dst-gap", clock });
      const job = pool.defineAction("job", () => undefined);
      await pool.schedule("three", { cron: "0 3 * * *", timezone: "America/New_York" }, job, {});
      await gapPool.schedule(
        "gap",
        { cron: "30 2 * * *", timezone: "America/New_York" },
        gapPool.defineAction("job", () => undefined),
        {},
      );
      const ticks = enqueuedTicks([pool]);
      const gap = enqueuedTicks([gapPool]);
      for (let h = 0; h < 4 * 24; h++) {
        clock.advance(3600_000);
        await pool.runOnce();
        await gapPool.runOnce();
      }
      const at = (s: string) => Date.parse(s);
      expect(ticks).toEqual([
        at("2030-03-08T08:00:00Z"),
        at("2030-03-09T08:00:00Z"),
        at("2030-03-10T07:00:00Z"),
        at("2030-03-11T07:00:00Z"),
      ]);
      // 02:30 on the day clocks go forward does not exist: that day's tick moves, but none runs twice.
      expect(gap.slice(0, 2)).toEqual([at("2030-03-08T07:30:00Z"), at("2030-03-09T07:30:00Z")]);
      expect(gap[gap.length - 1]).toBe(at("2030-03-11T06:30:00Z"));
      expect(new Set(gap).size).toBe(gap.length);
      expect(gap.length).toBe(4);
    });

    test("a tick's work is ordinary work: retried, canceled, with onComplete", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "ord" });
      const done: unknown[] = [];
      let calls = 0;
      const job = pool.defineAction("job", () => {
        if (++calls === 1) throw new Error("flaky");
        return "ok";
      });
      const oc = pool.defineOnComplete("oc", (_c, a) => void done.push([a.context, a.result]));
      await pool.schedule(
        "r",
        { cron: "* * * * *" },
        job,
        {},
        { retry: { maxAttempts: 2, initialBackoffMs: 10, base: 1 }, onComplete: oc, context: 7 },
      );
      t.clock.advance(60_000);
      await pool.runOnce();
      const id = (await pool.schedules())[0]!.lastWorkId!;
      expect(await pool.status(id)).toMatchObject({ state: "pending", previousAttempts: 1 });
      t.clock.advance(100);
      await pool.runOnce();
      await pool.runOnce();
      expect(done).toEqual([[7, { kind: "success", returnValue: "ok" }]]);
    });

    test("bad schedule input and bad rate limits are refused naming the field, and nothing is written", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "bad" });
      const job = pool.defineAction("job", () => undefined);
      const mut = pool.defineMutation("mut", () => undefined);
      const cases: [string, () => Promise<unknown>][] = [
        ["spec.cron", () => pool.schedule("a", { cron: "61 * * * *" }, job, {})],
        ["spec.cron", () => pool.schedule("a", { cron: "* * *" }, job, {})],
        ["spec.cron", () => pool.schedule("a", { cron: "0 0 0 30 2 * *" }, job, {})],
        ["spec.cron", () => pool.schedule("a", { cron: 5 } as never, job, {})],
        ["spec.timezone", () => pool.schedule("a", { cron: "* * * * *", timezone: "Mars/Olympus" }, job, {})],
        ["spec.zone", () => pool.schedule("a", { cron: "* * * * *", zone: "UTC" } as never, job, {})],
        ["scheduleId", () => pool.schedule("", { cron: "* * * * *" }, job, {})],
        ["scheduleId", () => pool.schedule("a b", { cron: "* * * * *" }, job, {})],
        ["scheduleId", () => pool.schedule(7 as never, { cron: "* * * * *" }, job, {})],
        ["scheduleId", () => pool.unschedule("x".repeat(201))],
        ["catchUp", () => pool.schedule("a", { cron: "* * * * *" }, job, {}, { catchUp: "all" as never })],
        ["runAt", () => pool.schedule("a", { cron: "* * * * *" }, job, {}, { runAt: 1 } as never)],
        ["retry", () => pool.schedule("a", { cron: "* * * * *" }, mut, {}, { retry: true } as never)],
        ["priority", () => pool.schedule("a", { cron: "* * * * *" }, job, {}, { priority: 5000 })],
        ["args.f", () => pool.schedule("a", { cron: "* * * * *" }, job, { f: () => 1 } as never)],
        ["handle", () => pool.schedule("a", { cron: "* * * * *" }, {} as never, {})],
        ["rateLimit", () => pool.configure({ rateLimit: 5 as never })],
        ["rateLimit.limit", () => pool.configure({ rateLimit: { limit: 0, periodMs: 1000 } })],
        ["rateLimit.periodMs", () => pool.configure({ rateLimit: { limit: 1, periodMs: 1.5 } })],
        ["keyRateLimit.per", () => pool.configure({ keyRateLimit: { limit: 1, periodMs: 1000, per: 1 } as never })],
        ["keyRateLimit.limit", () => pool.configure({ keyRateLimit: { limit: 2_000_000, periodMs: 1000 } })],
      ];
      for (const [field, call] of cases) {
        await expect(call(), field).rejects.toMatchObject({ name: "InvalidArgumentError", field });
      }
      expect(() => t.pool({ name: "bad2", rateLimit: { limit: 1 } as never })).toThrow(
        expect.objectContaining({ field: "rateLimit.periodMs" }),
      );
      expect(() => t.pool({ name: "bad2", keyRateLimit: null as never })).toThrow(expect.objectContaining({ field: "keyRateLimit" }));
      expect(await pool.schedules()).toEqual([]);
      expect(await t.driver.readRateLimits("bad")).toEqual({ rateLimit: null, keyRateLimit: null });
    });
  });
}
