/**
 * Progress and per-attempt logs of actions: `ctx.reportProgress` and `ctx.log` are kept
 * per attempt, written coalesced and fenced, and shown by status(), admin.get() and the
 * `progress` event; bad input is a named error that changes nothing; mutations have
 * neither.
 */
import { describe, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import { InvalidArgumentError, ManualClock, type ActionCtx, type ProgressEvent } from "../../src/index.js";
import { OUTPUT_FLUSH_MS } from "../../src/internal/attempt-output.js";
import type { StoreHarness } from "./harness.js";
import { aborted, deferred, nextEvent, T0, useTestContext, withDriver } from "./context.js";

export function defineProgressLogTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("progress and attempt logs", () => {
    const ctx = useTestContext(harness);

    test("progress is written coalesced, shown by status() and admin.get(), and its last value is stored before the outcome", async () => {
      const t = await ctx();
      let writes = 0;
      const store = withDriver(t.h.store, {
        writeAttemptOutput(real, ...args) {
          writes++;
          return real.writeAttemptOutput(...args);
        },
      });
      const pool = t.pool({}, store);
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const reported = deferred();
      const finish = deferred();
      const job = pool.defineAction("job", async (c) => {
        c.reportProgress(10);
        c.reportProgress(20);
        c.reportProgress(30.5);
        reported.resolve();
        await finish.promise;
        c.reportProgress({ step: "upload", done: 3, of: 4 });
        return "ok";
      });
      const events: ProgressEvent[] = [];
      pool.on("progress", (e) => void events.push(e));
      const id = await pool.enqueueAction(job, {});
      const step = pool.runOnce();
      await reported.promise;
      // Nothing is written before the flush interval passes.
      expect(writes).toBe(0);
      expect(await pool.status(id)).toEqual({ state: "running", previousAttempts: 0 });
      t.clock.advance(OUTPUT_FLUSH_MS - 1);
      expect(writes).toBe(0);
      const written = nextEvent(pool, "progress");
      t.clock.advance(1);
      expect(await written).toEqual({ event: "progress", pool: pool.name, workId: id, fnName: "job", attempt: 1, progress: 30.5 });
      expect(writes).toBe(1);
      expect(await pool.status(id)).toEqual({ state: "running", previousAttempts: 0, progress: 30.5 });
      expect((await admin.get(id))?.progress).toBe(30.5);
      finish.resolve();
      await step;
      expect(writes).toBe(2);
      expect(events.map((e) => e.progress)).toEqual([30.5, { step: "upload", done: 3, of: 4 }]);
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: "ok" } });
      const detail = await admin.get(id);
      expect(detail?.progress).toEqual({ step: "upload", done: 3, of: 4 });
      expect(detail?.attemptOutput).toEqual([
        {
          attempt: 1,
          progress: { step: "upload", done: 3, of: 4 },
          progressAt: T0 + OUTPUT_FLUSH_MS,
          logs: [],
          droppedLines: 0,
          updatedAt: T0 + OUTPUT_FLUSH_MS,
        },
      ]);
    });

    test("work that reports nothing writes nothing, nor do reports after its attempt ended", async () => {
      const t = await ctx();
      let writes = 0;
      const store = withDriver(t.h.store, {
        writeAttemptOutput(real, ...args) {
          writes++;
          return real.writeAttemptOutput(...args);
        },
      });
      const pool = t.pool({}, store);
      const contexts: ActionCtx[] = [];
      const job = pool.defineAction("job", (c) => {
        contexts.push(c);
        return "done";
      });
      const ids = await pool.enqueueActionBatch(job, [{}, {}, {}]);
      await pool.runOnce();
      expect(writes).toBe(0);
      // Reports after the attempt ended (a handler's background work) are ignored.
      contexts[0]!.reportProgress(50);
      contexts[1]!.log.info("too late");
      t.clock.advance(OUTPUT_FLUSH_MS);
      await pool.runOnce();
      expect(writes).toBe(0);
      expect(await t.driver.readAttemptOutput(ids)).toEqual([]);
      expect(await workpoolAdmin(t.h.store, { clock: t.clock }).get(ids[0]!)).toMatchObject({ progress: null, attemptOutput: [] });
    });

    test("log lines are kept per attempt across retries, bounded to the last 200 lines, the cut counted", async () => {
      const t = await ctx();
      const pool = t.pool();
      const job = pool.defineAction("job", (c) => {
        if (c.attempt === 1) {
          for (let i = 0; i < 250; i++) c.log.info(`line ${i}`);
          throw new Error("first fails");
        }
        c.log.warn("second attempt", { tries: c.attempt, tags: ["a", null] });
        c.log.error("\u0000\u001b[31mred\u0007 <b>bold</b>\r\n");
        return null;
      });
      const id = await pool.enqueueAction(job, {}, { retry: { maxAttempts: 2, initialBackoffMs: 0, base: 1 } });
      await pool.runOnce();
      await pool.runOnce();
      const detail = await workpoolAdmin(t.h.store, { clock: t.clock }).get(id);
      expect(detail?.attemptOutput.map((o) => [o.attempt, o.logs.length, o.droppedLines])).toEqual([
        [1, 200, 50],
        [2, 2, 0],
      ]);
      const [first, second] = detail!.attemptOutput;
      expect(first!.logs[0]).toEqual({ at: T0, level: "info", message: "line 50" });
      expect(first!.logs[199]!.message).toBe("line 249");
      expect(first!.progress).toBeNull();
      // Control characters and markup are stored as given: whoever shows them escapes them.
      expect(second!.logs).toEqual([
        { at: T0, level: "warn", message: "second attempt", fields: { tries: 2, tags: ["a", null] } },
        { at: T0, level: "error", message: "\u0000\u001b[31mred\u0007 <b>bold</b>\r\n" },
      ]);
    });

    test("lines are bounded to 64 KiB per attempt; a long message is cut, large fields are dropped, each marked", async () => {
      const t = await ctx();
      const pool = t.pool();
      const job = pool.defineAction("job", (c) => {
        for (let i = 0; i < 10; i++) c.log.info(`${i}`.padEnd(8000, "x"));
        c.log.info("y".repeat(9000));
        c.log.warn("big fields", { blob: "z".repeat(9000) });
      });
      const id = await pool.enqueueAction(job, {});
      await pool.runOnce();
      const [out] = (await workpoolAdmin(t.h.store, { clock: t.clock }).get(id))!.attemptOutput;
      const bytes = Buffer.byteLength(JSON.stringify(out!.logs), "utf8");
      expect(bytes).toBeLessThanOrEqual(64 * 1024 + 2);
      expect(out!.droppedLines).toBeGreaterThan(0);
      expect(out!.logs.length + out!.droppedLines).toBe(12);
      const [cutMessage, cutFields] = out!.logs.slice(-2);
      expect(cutMessage).toEqual({ at: T0, level: "info", message: "y".repeat(8192), cut: true });
      expect(cutFields).toEqual({ at: T0, level: "warn", message: "big fields", cut: true });
    });

    test("bad progress and log input is a named error that changes nothing", async () => {
      const t = await ctx();
      const pool = t.pool();
      const errors: { field: string; message: string }[] = [];
      const attempt = (fn: () => void): void => {
        try {
          fn();
          errors.push({ field: "(none)", message: "no error" });
        } catch (e) {
          expect(e).toBeInstanceOf(InvalidArgumentError);
          errors.push({ field: (e as InvalidArgumentError).field, message: (e as Error).message });
        }
      };
      const job = pool.defineAction("job", (c) => {
        c.reportProgress(5);
        c.log.info("kept");
        for (const bad of [101, -1, Number.NaN, Infinity, "50", [1], null, true]) attempt(() => c.reportProgress(bad as never));
        attempt(() => c.reportProgress({ at: new Date(0) } as never));
        attempt(() => c.reportProgress({ blob: "x".repeat(5000) }));
        attempt(() => c.log.info(42 as never));
        attempt(() => c.log.warn("m", [1] as never));
        attempt(() => c.log.error("m", { f: () => 1 } as never));
        attempt(() => c.log.info("m", { n: Number.NaN }));
      });
      const id = await pool.enqueueAction(job, {});
      await pool.runOnce();
      expect(errors.map((e) => e.field)).toEqual([
        ...Array<string>(8).fill("ctx.reportProgress(value)"),
        "ctx.reportProgress(value).at",
        "ctx.reportProgress(value)",
        "ctx.log.info(message)",
        "ctx.log.warn(fields)",
        "ctx.log.error(fields).f",
        "ctx.log.info(fields).n",
      ]);
      expect(errors[0]!.message).toMatch(/from 0 to 100, got 101/);
      expect(errors[9]!.message).toMatch(/limit is 4096 bytes/);
      const [out] = (await workpoolAdmin(t.h.store, { clock: t.clock }).get(id))!.attemptOutput;
      expect(out).toMatchObject({ progress: 5, logs: [{ level: "info", message: "kept" }], droppedLines: 0 });
    });

    test("a lost attempt's progress and lines are not written: its late write is fenced out", async () => {
      const t = await ctx();
      // The "dead" worker's clock never moves: no heartbeat, no timed flush.
      const dead = t.pool({ leaseMs: 1000, clock: new ManualClock(T0) });
      const live = t.pool({ leaseMs: 1000 });
      const release = deferred();
      const job = dead.defineAction("job", async (c) => {
        await release.promise;
        c.reportProgress(99);
        c.log.info("from the lost attempt");
        return "late";
      });
      live.defineAction("job", (c) => {
        c.log.info(`attempt ${c.attempt}`);
        c.reportProgress(100);
        return "rescued";
      });
      const id = await dead.enqueueAction(job, {}, { retry: { maxAttempts: 2, initialBackoffMs: 0, base: 1 } });
      const started = nextEvent(dead, "started");
      const deadStep = dead.runOnce();
      await started;
      t.clock.advance(10_000);
      expect((await live.runOnce()).rescued).toBe(1);
      await live.runOnce();
      const deadEvents: ProgressEvent[] = [];
      dead.on("progress", (e) => void deadEvents.push(e));
      release.resolve();
      await deadStep;
      expect(deadEvents).toEqual([]);
      const detail = await workpoolAdmin(t.h.store, { clock: t.clock }).get(id);
      expect(detail?.attemptOutput.map((o) => [o.attempt, o.progress, o.logs.map((l) => l.message)])).toEqual([[2, 100, ["attempt 2"]]]);
      // The store's fence itself: a write for another worker, or another attempt, does not apply.
      const blocked = deferred();
      const hold = live.defineAction("hold", () => blocked.promise);
      const held = await live.enqueueAction(hold, {});
      const started2 = nextEvent(live, "started", (e) => e.workId === held);
      const step = live.runOnce();
      await started2;
      const write = { id: held, attempt: 1, progress: "1", progressAt: T0, logs: null, logsDropped: 0 };
      expect(await t.driver.writeAttemptOutput(live.name, "another-worker", [write], T0)).toEqual([{ id: held, attempt: 1 }]);
      blocked.resolve();
      await step;
      expect(await t.driver.readAttemptOutput([held])).toEqual([]);
    });

    test("a canceled attempt's last progress and lines are stored before it finishes canceled", async () => {
      const t = await ctx();
      const pool = t.pool();
      const running = deferred();
      const job = pool.defineAction("job", async (c) => {
        c.reportProgress(40);
        c.log.info("waiting");
        running.resolve();
        await aborted(c.signal);
        c.log.warn("aborted");
      });
      const id = await pool.enqueueAction(job, {});
      const step = pool.runOnce();
      await running.promise;
      await pool.cancel(id);
      await step;
      const detail = await workpoolAdmin(t.h.store, { clock: t.clock }).get(id);
      expect(detail?.resultKind).toBe("canceled");
      expect(detail?.attemptOutput.map((o) => [o.attempt, o.progress, o.logs.map((l) => l.message)])).toEqual([
        [1, 40, ["waiting", "aborted"]],
      ]);
    });

    test("an attempt handed back by stop() writes nothing; its next run keeps its own lines", async () => {
      const t = await ctx();
      const first = t.pool();
      const running = deferred();
      const finish = deferred();
      const job = first.defineAction("job", async (c) => {
        c.log.info("first run");
        running.resolve();
        await finish.promise;
        c.log.info("first run, after the hand-back");
        c.reportProgress(100);
      });
      await first.start();
      const id = await first.enqueueAction(job, {});
      await running.promise;
      await first.stop({ timeoutMs: 0 });
      finish.resolve();
      expect(await first.status(id)).toEqual({ state: "pending", previousAttempts: 0 });
      expect(await t.driver.readAttemptOutput([id])).toEqual([]);
      const second = t.pool();
      second.defineAction("job", (c) => c.log.info(`second run, attempt ${c.attempt}`));
      await second.runOnce();
      const detail = await workpoolAdmin(t.h.store, { clock: t.clock }).get(id);
      expect(detail?.attemptOutput.map((o) => [o.attempt, o.progress, o.logs.map((l) => l.message)])).toEqual([
        [1, null, ["second run, attempt 1"]],
      ]);
    });

    test("a mutation has neither progress nor log; deleting work deletes its attempts' output", async () => {
      const t = await ctx();
      const pool = t.pool();
      const seen: string[] = [];
      const write = pool.defineMutation("write", (c) => {
        seen.push(String("reportProgress" in c), String("log" in c));
      });
      const job = pool.defineAction("job", (c) => c.log.info("kept until purged"));
      await pool.enqueueMutation(write, {});
      const id = await pool.enqueueAction(job, {});
      await pool.runOnce();
      expect(seen).toEqual(["false", "false"]);
      expect(await t.driver.readAttemptOutput([id])).toHaveLength(1);
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      t.clock.advance(1);
      expect(await admin.purge(pool.name, { state: "finished" })).toBe(2);
      expect(await t.driver.readAttemptOutput([id])).toEqual([]);
    });
  });
}
