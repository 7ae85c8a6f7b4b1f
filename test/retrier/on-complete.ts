/** ActionRetrier: onComplete. */
import { describe, expect, test } from "vitest";
import { InvalidArgumentError, RunNotCompletedError, WorkError, type RetrierOnCompleteArgs } from "../../src/index.js";
import { errorOf, type RetrierStoreFactory } from "./helpers.js";
import { useRetrierContext, DAY } from "./context.js";

/** Registers the "onComplete" tests for one store. */
export function defineOnCompleteTests<Tx>(factory: RetrierStoreFactory<Tx>): void {
  describe("onComplete", () => {
    const ctx = useRetrierContext(factory);
    test("runs exactly once per run with { runId, result }, in a transaction, for success, failure and cancel", async () => {
      const t = await ctx();
      await t.s.createAppTable();
      const r = t.retrier({ maxFailures: 1 });
      const calls: { ctxRunId: string; name: string; args: RetrierOnCompleteArgs }[] = [];
      const done = r.defineOnComplete("done", async (c, args) => {
        calls.push({ ctxRunId: c.runId, name: c.name, args });
        await t.s.insertAppRow(c.tx, args.runId);
      });
      const ok = r.defineAction("ok", () => ({ id: 7 }));
      const bad = r.defineAction("bad", () => {
        throw new Error("nope");
      });
      const okId = await r.run(ok, {}, { onComplete: done });
      const badId = await r.run(bad, {}, { onComplete: done });
      const laterId = await r.runAfter(60_000, ok, {}, { onComplete: done });
      await r.runOnce();
      expect(await r.cancel(laterId)).toBe(true);
      t.clock.advance(1000);
      await r.runOnce();
      for (let i = 0; i < 3; i++) {
        t.clock.advance(DAY);
        await r.runOnce();
      }
      const byId = new Map(calls.map((c) => [c.args.runId, c]));
      expect(calls).toHaveLength(3);
      expect(byId.get(okId)).toEqual({
        ctxRunId: okId,
        name: "done",
        args: { runId: okId, result: { type: "success", returnValue: { id: 7 } } },
      });
      expect(byId.get(badId)!.args).toEqual({ runId: badId, result: { type: "failed", error: "nope" } });
      expect(byId.get(laterId)!.args).toEqual({ runId: laterId, result: { type: "canceled" } });
      expect(await t.s.appRows()).toEqual([okId, badId, laterId].sort());
    });

    test("receives the run's context and the error data of its last failure", async () => {
      const t = await ctx();
      const r = t.retrier({ maxFailures: 0 });
      const calls: RetrierOnCompleteArgs<{ currency: string }>[] = [];
      const done = r.defineOnComplete<{ currency: string }>("done", (_c, args) => void calls.push(args));
      const f = r.defineAction("f", () => {
        throw new WorkError("no rate", { status: 503 });
      });
      const runId = await r.run(f, {}, { onComplete: done, context: { currency: "EUR" } });
      await r.runOnce();
      await r.runOnce();
      const result = { type: "failed", error: "no rate", errorData: { status: 503 } } as const;
      expect(calls).toEqual([{ runId, context: { currency: "EUR" }, result }]);
      expect(await r.status(runId)).toEqual({ type: "completed", result });
    });

    test("an onComplete that throws rolls back and is delivered again; it commits once; cleanup waits for it", async () => {
      const t = await ctx();
      await t.s.createAppTable();
      const r = t.retrier();
      let tries = 0;
      const flaky = r.defineOnComplete("flaky", async (c, { runId }) => {
        tries++;
        await t.s.insertAppRow(c.tx, `${runId}#${tries}`);
        if (tries === 1) throw new Error("onComplete boom");
      });
      const ok = r.defineAction("ok", () => 1);
      const runId = await r.run(ok, {}, { onComplete: flaky });
      await r.runOnce();
      expect(tries).toBe(1);
      expect(await t.s.appRows()).toEqual([]);
      expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "success", returnValue: 1 } });
      const e = await errorOf(() => r.cleanup(runId));
      expect(e).toBeInstanceOf(RunNotCompletedError);
      expect((e as Error).message).toMatch(/onComplete handler has not committed yet/);
      // Redelivery uses the pool's default onComplete backoff: 250 ms at jitter 1.0.
      t.clock.advance(250);
      await r.runOnce();
      expect(tries).toBe(2);
      t.clock.advance(DAY);
      await r.runOnce();
      expect(tries).toBe(2);
      expect(await t.s.appRows()).toEqual([`${runId}#2`]);
      await r.cleanup(runId);
    });

    test("defineOnComplete and defineAction check their arguments", async () => {
      const t = await ctx();
      const r = t.retrier();
      r.defineAction("send", () => 1);
      expect(() => r.defineAction("send", () => 2)).toThrow(/"send" is already defined/);
      expect(() => r.defineOnComplete("send", () => undefined)).toThrow(InvalidArgumentError);
      expect(() => r.defineAction("x", "nope" as never)).toThrow(/defineAction\(handler\): must be a function/);
      expect(() => r.defineOnComplete("y", 5 as never)).toThrow(/defineOnComplete\(handler\): must be a function/);
      expect(() => r.defineAction("", () => 1)).toThrow(/defineAction\(name\)/);
    });
  });
}
