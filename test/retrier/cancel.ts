/** ActionRetrier: cancel. */
import { describe, expect, test } from "vitest";
import { aborted, nextEvent, type RetrierStoreFactory } from "./helpers.js";
import { useRetrierContext, DAY } from "./context.js";

/** Registers the "cancel" tests for one store. */
export function defineCancelTests<Tx>(factory: RetrierStoreFactory<Tx>): void {
  describe("cancel", () => {
    const ctx = useRetrierContext(factory);
    test("a run waiting to start completes canceled at once and never runs; cancel again is false", async () => {
      const t = await ctx();
      const r = t.retrier();
      let calls = 0;
      const a = r.defineAction("a", () => ++calls);
      const runId = await r.runAfter(10_000, a, {});
      expect(await r.cancel(runId)).toBe(true);
      expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "canceled" } });
      expect(await r.cancel(runId)).toBe(false);
      t.clock.advance(10_000);
      expect((await r.runOnce()).claimed).toBe(0);
      expect(calls).toBe(0);
    });

    test("a running attempt has its signal aborted, completes canceled and is not retried", async () => {
      const t = await ctx();
      const r = t.retrier();
      const reasons: unknown[] = [];
      const hang = r.defineAction("hang", async (c) => {
        reasons.push(await aborted(c.signal));
        throw new Error("aborted, would be retried if not canceled");
      });
      const runId = await r.run(hang, {});
      const started = nextEvent(r, "started");
      const step = r.runOnce();
      await started;
      expect(await r.cancel(runId)).toBe(true);
      // Already being canceled: this call cancels nothing.
      expect(await r.cancel(runId)).toBe(false);
      await step;
      expect(reasons).toHaveLength(1);
      expect((reasons[0] as Error).name).toBe("AbortError");
      expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "canceled" } });
      t.clock.advance(DAY);
      expect((await r.runOnce()).claimed).toBe(0);
      expect(reasons).toHaveLength(1);
    });

    test("a run waiting to retry completes canceled", async () => {
      const t = await ctx();
      const r = t.retrier();
      let calls = 0;
      const f = r.defineAction("f", () => {
        calls++;
        throw new Error("transient");
      });
      const runId = await r.run(f, {});
      await r.runOnce();
      expect(await r.status(runId)).toEqual({ type: "inProgress" });
      expect(await r.cancel(runId)).toBe(true);
      expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "canceled" } });
      t.clock.advance(DAY);
      await r.runOnce();
      expect(calls).toBe(1);
    });

    test("cancel of a completed run is false and changes nothing", async () => {
      const t = await ctx();
      const r = t.retrier();
      const a = r.defineAction("a", () => "done");
      const runId = await r.run(a, {});
      await r.runOnce();
      expect(await r.cancel(runId)).toBe(false);
      expect(await r.status(runId)).toEqual({ type: "completed", result: { type: "success", returnValue: "done" } });
    });
  });
}
