/** ActionRetrier: lost workers. */
import { describe, expect, test } from "vitest";
import { ManualClock } from "../../src/index.js";
import { deferred, nextEvent, T0, type RetrierStoreFactory } from "./helpers.js";
import { useRetrierContext } from "./context.js";

/** Registers the "lost workers" tests for one store. */
export function defineLostWorkerTests<Tx>(factory: RetrierStoreFactory<Tx>): void {
  describe("lost workers", () => {
    const ctx = useRetrierContext(factory);
    test("a run whose worker died is retried after leaseMs with the normal backoff; the late result is ignored", async () => {
      const t = await ctx();
      // The "dead" worker's clock never moves, so it never renews its lease.
      const frozen = new ManualClock(T0);
      const dead = t.retrier({ leaseMs: 10_000, clock: frozen });
      const alive = t.retrier({ leaseMs: 10_000 });
      const release = deferred<string>();
      const job = dead.defineAction("job", () => release.promise);
      alive.defineAction("job", (c) => `rescued on attempt ${c.attempt}`);
      const runId = await dead.run(job, {});
      const started = nextEvent(dead, "started");
      const deadStep = dead.runOnce();
      await started;
      t.clock.advance(9_999);
      expect((await alive.runOnce()).rescued).toBe(0);
      t.clock.advance(2);
      expect((await alive.runOnce()).rescued).toBe(1);
      expect(await alive.status(runId)).toEqual({ type: "inProgress" });
      // The lost attempt counts as the first failure: the retry waits 250 * 2^1 ms.
      t.clock.advance(499);
      expect((await alive.runOnce()).claimed).toBe(0);
      t.clock.advance(1);
      expect((await alive.runOnce()).claimed).toBe(1);
      const rescued = { type: "completed", result: { type: "success", returnValue: "rescued on attempt 2" } };
      expect(await alive.status(runId)).toEqual(rescued);
      release.resolve("late result");
      await deadStep;
      expect(await alive.status(runId)).toEqual(rescued);
    });

    test("with maxFailures 0 a lost worker fails the run", async () => {
      const t = await ctx();
      const frozen = new ManualClock(T0);
      const dead = t.retrier({ leaseMs: 1000, clock: frozen, maxFailures: 0 });
      const alive = t.retrier({ leaseMs: 1000, maxFailures: 0 });
      const never = deferred();
      const job = dead.defineAction("job", () => never.promise);
      const runId = await dead.run(job, {});
      const started = nextEvent(dead, "started");
      void dead.runOnce();
      await started;
      // Past the lease and the dead instance's maintenance leadership.
      t.clock.advance(10_000);
      expect((await alive.runOnce()).rescued).toBe(1);
      const s = await alive.status(runId);
      expect(s.type === "completed" && s.result.type === "failed" && s.result.error).toMatch(/^worker lost/);
      never.resolve();
    });
  });
}
