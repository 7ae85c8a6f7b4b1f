/**
 * The driver contract, schedules: stored definitions, due schedules, and the
 * compare-and-set that enqueues a tick's work exactly once, however many workers race.
 */
import { describe, expect, test } from "vitest";
import type { Driver } from "../../../src/driver/driver.js";
import type { ScheduleAdvance, ScheduleWrite } from "../../../src/driver/schedule-ops.js";
import type { StoreHarness } from "../../conformance/harness.js";
import { everyColumn, expectEveryColumn, POOL, T0, useDriver } from "./setup.js";

/** A schedule write of `id`, first due at `nextRunAt`. */
function schedule(id: string, nextRunAt: number, overrides: Partial<ScheduleWrite> = {}): ScheduleWrite {
  return {
    id,
    cron: "* * * * *",
    timezone: "UTC",
    catchUp: "latest",
    kind: "action",
    fnName: "tick",
    args: "{}",
    options: "{}",
    nextRunAt,
    now: T0 - 60_000,
    ...overrides,
  };
}

/** Registers the schedule tests for one store. */
export function defineScheduleContract<Tx>(harness: StoreHarness<Tx>): void {
  describe("schedules", () => {
    const driver = useDriver(harness);

    /** The one stored schedule `id` of POOL. */
    async function stored(d: Driver<Tx>, id: string) {
      return (await d.listSchedules(POOL)).find((s) => s.id === id)!;
    }

    test("of two advances of the same step, racing, exactly one applies and enqueues its tick's work", async () => {
      const d = await driver();
      await d.upsertSchedule(POOL, schedule("s", T0));
      const s = await stored(d, "s");
      const step = (seed: number): ScheduleAdvance => ({
        id: "s",
        revision: s.revision,
        expectNextRunAt: T0,
        nextRunAt: T0 + 60_000,
        tick: { at: T0, work: everyColumn(seed, T0) },
      });
      const [a, b] = [step(1), step(2)];
      const applied = await Promise.all([d.advanceSchedule(POOL, a), d.advanceSchedule(POOL, b)]);
      expect(applied.filter(Boolean)).toHaveLength(1);
      const winner = applied[0] ? a : b;
      const rows = await d.readWork(POOL, [a.tick!.work.id, b.tick!.work.id]);
      expect(rows.map((r) => r.id)).toEqual([winner.tick!.work.id]);
      expectEveryColumn(rows[0], winner.tick!.work, "the tick's work");
      expect(await stored(d, "s")).toMatchObject({ nextRunAt: T0 + 60_000, lastTick: T0, lastWorkId: winner.tick!.work.id });
      // The same step once more finds the schedule moved on: nothing is written.
      expect(await d.advanceSchedule(POOL, { ...a, tick: { at: T0, work: everyColumn(3, T0) } })).toBe(false);
      expect((await d.counts(POOL, T0)).pending).toBe(1);
    });

    test("a step computed from an older definition is refused; a step that skips enqueues nothing", async () => {
      const d = await driver();
      await d.upsertSchedule(POOL, schedule("s", T0));
      const old = await stored(d, "s");
      // Same cron and timezone: the next tick is kept, the revision moves.
      await d.upsertSchedule(POOL, schedule("s", T0 + 5_000, { args: '{"v":2}' }));
      const now = await stored(d, "s");
      expect(now).toMatchObject({ args: '{"v":2}', nextRunAt: T0 });
      expect(now.revision).not.toBe(old.revision);
      const work = everyColumn(1, T0);
      const stale: ScheduleAdvance = {
        id: "s",
        revision: old.revision,
        expectNextRunAt: T0,
        nextRunAt: T0 + 60_000,
        tick: { at: T0, work },
      };
      expect(await d.advanceSchedule(POOL, stale)).toBe(false);
      expect(await d.readWork(POOL, [work.id])).toEqual([]);
      expect(await d.advanceSchedule(POOL, { ...stale, revision: now.revision, tick: null })).toBe(true);
      expect(await stored(d, "s")).toMatchObject({ nextRunAt: T0 + 60_000, lastTick: null, lastWorkId: null });
      expect((await d.counts(POOL, T0)).pending).toBe(0);
    });

    test("due schedules come earliest first, with the next time of the rest; a new cron moves the next tick; delete removes", async () => {
      const d = await driver();
      await d.upsertSchedule(POOL, schedule("later", T0 + 10_000));
      await d.upsertSchedule(POOL, schedule("b", T0 - 1_000));
      await d.upsertSchedule(POOL, schedule("a", T0));
      const { due, nextAt } = await d.dueSchedules(POOL, T0, 10);
      expect(due.map((s) => s.id)).toEqual(["b", "a"]);
      expect(nextAt).toBe(T0 + 10_000);
      expect((await d.dueSchedules(POOL, T0, 1)).due.map((s) => s.id)).toEqual(["b"]);
      expect((await d.listSchedules(null)).map((s) => s.id)).toEqual(["a", "b", "later"]);
      await d.upsertSchedule(POOL, schedule("later", T0 + 20_000, { cron: "*/2 * * * *" }));
      expect(await stored(d, "later")).toMatchObject({ cron: "*/2 * * * *", nextRunAt: T0 + 20_000 });
      expect(await d.deleteSchedule(POOL, "a")).toBe(true);
      expect(await d.deleteSchedule(POOL, "a")).toBe(false);
      expect((await d.listSchedules(POOL)).map((s) => s.id)).toEqual(["b", "later"]);
    });
  });
}
