/**
 * Per-work options kept with the row: `onCompleteExcludeKinds` skips onComplete for some
 * result kinds, and `logLevel` gives one work's events their own log threshold. Both
 * travel with the row through every path that writes or claims it.
 */
import { describe, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import { InvalidArgumentError, NonRetryableError, type ResultKind, type WorkId } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext } from "./context.js";

export function defineWorkOptionTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("per-work options", () => {
    const ctx = useTestContext(harness);

    test("onCompleteExcludeKinds skips onComplete for the kinds it names and runs it once for the others", async () => {
      const t = await ctx();
      const pool = t.pool({ logLevel: "REPORT" });
      const heard: { id: WorkId; kind: ResultKind }[] = [];
      const done = pool.defineOnComplete("done", (_ctx, { workId, result }) => void heard.push({ id: workId, kind: result.kind }));
      const ok = pool.defineAction("ok", () => 1);
      const bad = pool.defineAction("bad", () => {
        throw new NonRetryableError("no");
      });
      const only = { onComplete: done, onCompleteExcludeKinds: ["success"] as const };
      const succeeded = await pool.enqueueAction(ok, {}, only);
      const failed = await pool.enqueueAction(bad, {}, only);
      const canceled = await pool.enqueueAction(ok, {}, { ...only, runAfter: 60_000 });
      const failQuiet = await pool.enqueueAction(bad, {}, { onComplete: done, onCompleteExcludeKinds: ["failed", "canceled"] });
      await pool.cancel(canceled);
      await pool.runOnce();
      await pool.runOnce();
      expect(heard.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
        [
          { id: failed, kind: "failed" },
          { id: canceled, kind: "canceled" },
        ].sort((a, b) => a.id.localeCompare(b.id)),
      );
      // Skipped: the work has no delivery to report, and retention may delete it at once.
      const s = await pool.status(succeeded);
      expect(s).toMatchObject({ state: "finished", result: { kind: "success" } });
      expect(s).not.toHaveProperty("onComplete");
      expect(await pool.status(failed)).toMatchObject({ onComplete: { state: "done" } });
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      expect(await admin.get(succeeded)).toMatchObject({
        onComplete: { handler: "done", state: "skipped" },
        onCompleteExcludeKinds: ["success"],
        logLevel: null,
        traceparent: null,
      });
      expect((await admin.get(failQuiet))!.onComplete).toMatchObject({ handler: "done", state: "skipped" });
      // A failure nobody receives is worth a warning; one the onComplete receives is not.
      expect(t.logger.lines.filter((l) => l.level === "warn").map((l) => l.fields.workId)).toEqual([failQuiet]);
    });

    test("a mutation, a batch, a replaced unique work and a schedule's ticks keep their options", async () => {
      const t = await ctx();
      const pool = t.pool({ logLevel: "REPORT" });
      const calls: string[] = [];
      const done = pool.defineOnComplete("done", (_ctx, { context }) => void calls.push(String(context)));
      const m = pool.defineMutation("m", () => 1);
      const a = pool.defineAction("a", () => 2);
      const skip = ["success"] as const;
      await pool.enqueueMutation(m, {}, { onComplete: done, context: "mutation", onCompleteExcludeKinds: skip });
      await pool.enqueueActionBatch(a, [{}, {}], { onComplete: done, context: "batch", onCompleteExcludeKinds: skip });
      // The replacing enqueue's options win: its exclusion is dropped, so onComplete runs.
      await pool.enqueueAction(a, {}, { uniqueKey: "u", runAfter: 1, onComplete: done, context: "kept", onCompleteExcludeKinds: skip });
      await pool.enqueueAction(a, {}, { uniqueKey: "u", onConflict: "replace", onComplete: done, context: "replaced" });
      await pool.schedule("s", { cron: "* * * * * *" }, a, {}, { onComplete: done, context: "tick", onCompleteExcludeKinds: skip });
      t.clock.advance(1000);
      for (let i = 0; i < 4; i++) await pool.runOnce();
      expect(calls).toEqual(["replaced"]);
    });

    test("a work's logLevel replaces the pool's for its events, across enqueue, claim and completion", async () => {
      const t = await ctx();
      const pool = t.pool({ logLevel: "WARN" });
      const ok = pool.defineAction("ok", () => 1);
      const bad = pool.defineAction("bad", () => {
        throw new NonRetryableError("expected");
      });
      const loud = await pool.enqueueAction(ok, {}, { logLevel: "DEBUG" });
      const quiet = await pool.enqueueAction(ok, {});
      const hushed = await pool.enqueueAction(bad, {}, { logLevel: "ERROR" });
      const warned = await pool.enqueueAction(bad, {});
      const seen: WorkId[] = [];
      pool.on("started", (e) => void seen.push(e.workId));
      await pool.runOnce();
      // Listeners hear every event; the logger only those at or above each work's level.
      expect(seen.sort()).toEqual([loud, quiet, hushed, warned].sort());
      const logged = t.logger.lines.map((l) => `${String(l.fields.event)} ${String(l.fields.workId)}`);
      expect(logged.sort()).toEqual([`enqueued ${loud}`, `started ${loud}`, `completed ${loud}`, `completed ${warned}`].sort());
      expect(t.logger.lines.find((l) => l.fields.workId === loud && l.fields.event === "started")!.fields.logLevel).toBe("DEBUG");
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      expect((await admin.get(loud))!.logLevel).toBe("DEBUG");
      expect((await admin.get(quiet))!).toMatchObject({ logLevel: null, onCompleteExcludeKinds: [] });
    });

    test("a work enqueued while a slot is free, and started in the same call, keeps its logLevel", async () => {
      const t = await ctx();
      const pool = t.pool({ logLevel: "ERROR" });
      const ok = pool.defineAction("ok", () => 1);
      await pool.start();
      const completed = new Promise<void>((resolve) => pool.on("completed", () => resolve()));
      const id = await pool.enqueueAction(ok, {}, { logLevel: "INFO" });
      await completed;
      await pool.stop();
      expect(t.logger.lines.filter((l) => l.fields.workId === id).map((l) => l.fields.event)).toEqual(["enqueued", "started", "completed"]);
    });

    test("bad onCompleteExcludeKinds and logLevel are refused naming the field; nothing is written", async () => {
      const t = await ctx();
      const pool = t.pool();
      const done = pool.defineOnComplete("done", () => undefined);
      const a = pool.defineAction("a", () => 1);
      const cases: [unknown, string][] = [
        [{ onCompleteExcludeKinds: ["failed"] }, "onCompleteExcludeKinds"],
        [{ onComplete: done, onCompleteExcludeKinds: "failed" }, "onCompleteExcludeKinds"],
        [{ onComplete: done, onCompleteExcludeKinds: ["failed", "lost"] }, "onCompleteExcludeKinds[1]"],
        [{ onComplete: done, onCompleteExcludeKinds: ["success", "failed", "canceled"] }, "onCompleteExcludeKinds"],
        [{ logLevel: "LOUD" }, "logLevel"],
        [{ logLevel: "debug" }, "logLevel"],
      ];
      for (const [options, field] of cases) {
        const e = await pool.enqueueAction(a, {}, options as never).catch((err: unknown) => err);
        expect(e, JSON.stringify(options)).toBeInstanceOf(InvalidArgumentError);
        expect((e as InvalidArgumentError).field).toBe(field);
      }
      expect(await harness.countWorkRows(t.h)).toBe(0);
    });
  });
}
