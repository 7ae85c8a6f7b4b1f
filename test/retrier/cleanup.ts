/** ActionRetrier: cleanup and retention. */
import { describe, expect, test } from "vitest";
import { InvalidArgumentError, RunNotCompletedError, UnknownRunError, type RunId } from "../../src/index.js";
import { errorOf, type RetrierStoreFactory } from "./helpers.js";
import { useRetrierContext, DAY } from "./context.js";

/** Registers the "cleanup and retention" tests for one store. */
export function defineCleanupTests<Tx>(factory: RetrierStoreFactory<Tx>): void {
  describe("cleanup and retention", () => {
    const ctx = useRetrierContext(factory);
    test("cleanup deletes a completed run; afterwards the run is unknown", async () => {
      const t = await ctx();
      const r = t.retrier();
      const a = r.defineAction("a", () => 1);
      const runId = await r.run(a, {});
      await r.runOnce();
      await r.cleanup(runId);
      for (const call of [() => r.status(runId), () => r.cancel(runId), () => r.cleanup(runId)]) {
        const e = await errorOf(call);
        expect(e).toBeInstanceOf(UnknownRunError);
        expect((e as UnknownRunError).runId).toBe(runId);
        expect((e as Error).message).toMatch(/no run with id .* cleanup\(\)/);
      }
    });

    test("cleanup of a run in progress throws a clear error and deletes nothing", async () => {
      const t = await ctx();
      const r = t.retrier();
      const f = r.defineAction("f", () => {
        throw new Error("transient");
      });
      const waiting = await r.runAfter(1000, f, {});
      const retrying = await r.run(f, {});
      await r.runOnce();
      for (const runId of [waiting, retrying]) {
        const e = await errorOf(() => r.cleanup(runId));
        expect(e).toBeInstanceOf(RunNotCompletedError);
        expect((e as Error).message).toMatch(new RegExp(`run "${runId}" cannot be deleted: it is still in progress`));
        expect(await r.status(runId)).toEqual({ type: "inProgress" });
      }
    });

    test("completed runs are deleted 7 days after they complete", async () => {
      const t = await ctx();
      const r = t.retrier();
      const a = r.defineAction("a", () => 1);
      const runId = await r.run(a, {});
      await r.runOnce();
      t.clock.advance(7 * DAY);
      expect((await r.runOnce()).deleted).toBe(0);
      expect(await r.status(runId)).toMatchObject({ type: "completed" });
      t.clock.advance(1);
      expect((await r.runOnce()).deleted).toBe(1);
      expect(await errorOf(() => r.status(runId))).toBeInstanceOf(UnknownRunError);
    });

    test("malformed run ids are rejected naming runId", async () => {
      const t = await ctx();
      const r = t.retrier();
      for (const call of [() => r.status("nope" as RunId), () => r.cancel(42 as never), () => r.cleanup(undefined as never)]) {
        const e = await errorOf(call);
        expect(e).toBeInstanceOf(InvalidArgumentError);
        expect((e as Error).message).toMatch(/runId: is not a run id/);
      }
    });
  });
}
