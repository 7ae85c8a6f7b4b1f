/**
 * Structured error data: a handler that throws a WorkError (or a NonRetryableError with
 * data) fails with `{ kind: "failed", error, errorData }`, seen by onComplete and status.
 */
import { describe, expect, test } from "vitest";
import { NonRetryableError, WorkError, type OnCompleteArgs, type RunResult } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext } from "./context.js";

export function defineErrorDataTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("error data", () => {
    const ctx = useTestContext(harness);

    test("an action's WorkError data reaches onComplete and status, after its retries", async () => {
      const t = await ctx();
      const pool = t.pool();
      const seen: OnCompleteArgs[] = [];
      const done = pool.defineOnComplete("done", (_c, args) => void seen.push(args));
      let attempt = 0;
      const charge = pool.defineAction("charge", () => {
        attempt++;
        throw new WorkError("card declined", { code: "declined", attempt, nested: [1, null, { ok: false }] });
      });
      const id = await pool.enqueueAction(charge, {}, { onComplete: done, retry: { maxAttempts: 2, initialBackoffMs: 10, base: 1 } });
      await pool.runOnce();
      t.clock.advance(100);
      await pool.runOnce();
      await pool.runOnce();
      const result: RunResult = {
        kind: "failed",
        error: "card declined",
        errorData: { code: "declined", attempt: 2, nested: [1, null, { ok: false }] },
      };
      expect(seen).toEqual([{ workId: id, context: undefined, result }]);
      expect(await pool.status(id)).toMatchObject({ state: "finished", result });
    });

    test("a NonRetryableError's data and a mutation's WorkError data are kept; plain errors have none", async () => {
      const t = await ctx();
      const pool = t.pool();
      const stop = pool.defineAction("stop", () => {
        throw new NonRetryableError("gone", { data: ["x", 1] });
      });
      const write = pool.defineMutation("write", () => {
        throw new WorkError("conflict", { row: 7 });
      });
      const plain = pool.defineAction("plain", () => {
        throw Object.assign(new Error("oops"), { data: { not: "kept" } });
      });
      const a = await pool.enqueueAction(stop, {}, { retry: true });
      const b = await pool.enqueueMutation(write, {});
      const c = await pool.enqueueAction(plain, {});
      await pool.runOnce();
      await pool.runOnce();
      expect(await pool.statusBatch([a, b, c])).toEqual([
        { state: "finished", result: { kind: "failed", error: "gone", errorData: ["x", 1] } },
        { state: "finished", result: { kind: "failed", error: "conflict", errorData: { row: 7 } } },
        { state: "finished", result: { kind: "failed", error: "oops" } },
      ]);
    });

    test("data that is not JSON or too large is dropped, and the error says why", async () => {
      const t = await ctx();
      const pool = t.pool();
      const dated = pool.defineAction("dated", () => {
        throw new WorkError("late", { at: new Date(0) } as never);
      });
      const huge = pool.defineAction("huge", () => {
        throw new WorkError("big", "x".repeat(1024 * 1024 + 1));
      });
      const a = await pool.enqueueAction(dated, {});
      const b = await pool.enqueueAction(huge, {});
      await pool.runOnce();
      await pool.runOnce();
      const [sa, sb] = await pool.statusBatch([a, b]);
      expect(sa).toEqual({
        state: "finished",
        result: { kind: "failed", error: expect.stringMatching(/^late \(its data was not kept: errorData\.at: a Date is not plain JSON/) },
      });
      expect(sb).toEqual({
        state: "finished",
        result: {
          kind: "failed",
          error: expect.stringMatching(/^big \(its data was not kept: errorData: is \d+ bytes as JSON; the limit is 1048576/),
        },
      });
    });
  });
}
