/**
 * Attempts are fenced by (id, attempt) and timed from when the store runs the claim: a
 * heartbeat answer about an attempt that already ended never touches a newer attempt of
 * the same work, and a claim that waited for the store (every connection held by slow
 * mutations) starts full leases and counts its rate-limit starts from when it ran.
 */
import { describe, expect, test } from "vitest";
import type { WorkRow } from "../../src/driver/driver.js";
import type { StoreHarness } from "./harness.js";
import { aborted, deferred, nextEvent, T0, useTestContext, withDriver } from "./context.js";

export function defineAttemptFencingTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("attempt fencing and claim time", () => {
    const ctx = useTestContext(harness);

    test("a heartbeat answer that arrives after its attempt ended does not abort the newer attempt of the same work", async () => {
      const t = await ctx();
      // The first heartbeat is held before it reaches the store: its answer comes back after
      // attempt 1 failed and this worker claimed attempt 2, as when slow mutations hold the store.
      const beatSent = deferred();
      const beatGate = deferred();
      const beatAnswered = deferred();
      let held = false;
      const store = withDriver(t.h.store, {
        async heartbeat(real, ...args) {
          if (held) return real.heartbeat(...args);
          held = true;
          beatSent.resolve();
          await beatGate.promise;
          const res = await real.heartbeat(...args);
          beatAnswered.resolve();
          return res;
        },
      });
      const pool = t.pool({ leaseMs: 3000, maxParallelism: 4 }, store);
      const firstFails = deferred();
      const secondDone = deferred();
      const signals: AbortSignal[] = [];
      const job = pool.defineAction("job", async (c) => {
        signals.push(c.signal);
        if (c.attempt === 1) {
          await firstFails.promise;
          throw new Error("transient");
        }
        await secondDone.promise;
        return "second attempt";
      });
      await pool.start();
      const firstStarted = nextEvent(pool, "started");
      const id = await pool.enqueueAction(job, {}, { retry: { maxAttempts: 3, initialBackoffMs: 0, base: 2 } });
      await firstStarted;
      t.clock.advance(1000);
      await beatSent.promise;
      // Attempt 1 fails; the retry is due at once and the completion's claim starts attempt 2.
      const secondStarted = nextEvent(pool, "started", (e) => e.attempt === 2);
      firstFails.resolve();
      await secondStarted;
      beatGate.resolve();
      await beatAnswered.promise;
      await new Promise((r) => setImmediate(r));
      expect(signals).toHaveLength(2);
      expect(signals[1]!.aborted).toBe(false);
      expect(t.logger.matching("lost the lease")).toEqual([]);
      const finished = nextEvent(pool, "completed", (e) => e.workId === id && e.status !== "retrying");
      secondDone.resolve();
      expect((await finished).status).toBe("success");
      expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: "second attempt" } });
    });

    test("a heartbeat answer about a live attempt still aborts it", async () => {
      const t = await ctx();
      const pool = t.pool({ leaseMs: 3000 });
      const running = deferred<AbortSignal>();
      const job = pool.defineAction("job", (c) => {
        running.resolve(c.signal);
        return aborted(c.signal).then(() => "aborted");
      });
      await pool.start();
      const id = await pool.enqueueAction(job, {});
      const signal = await running.promise;
      // The attempt is taken from this worker (as when its lease lapsed and it was rescued).
      await t.driver.transaction((ops) => ops.release([{ id, attempt: 1 }], T0 + 60_000));
      t.clock.advance(1000);
      expect(String(await aborted(signal))).toMatch(/lost the attempt's lease/);
      expect(t.logger.matching(`lost the lease of ${id} attempt 1`)).toHaveLength(1);
    });

    test("a claim that waited for the store starts a full lease and records its rate-limit start when it ran", async () => {
      const t = await ctx();
      const leaseMs = 2000;
      // Every connection of the store held by a slow mutation of another pool.
      const holders = t.pool({ name: "holders", maxParallelism: harness.connections + 1 });
      const release = deferred();
      const holding: Promise<void>[] = [];
      const entered: (() => void)[] = [];
      for (let i = 0; i < harness.connections; i++) {
        const d = deferred();
        holding.push(d.promise);
        entered.push(d.resolve);
      }
      let n = 0;
      const hold = holders.defineMutation("hold", async () => {
        entered[n++]!();
        await release.promise;
      });
      // Observes the claims of the rate-limited pool; each goes straight to the real driver.
      const claims: { issued: () => void; done: (rows: WorkRow[]) => void }[] = [];
      const nextClaim = (): { issued: Promise<void>; done: Promise<WorkRow[]> } => {
        const issued = deferred();
        const done = deferred<WorkRow[]>();
        claims.push({ issued: issued.resolve, done: done.resolve });
        return { issued: issued.promise, done: done.promise };
      };
      let lastClaim: Promise<unknown> = Promise.resolve();
      const observed = withDriver(t.h.store, {
        claim(real, pool, opts) {
          const watcher = claims.shift();
          watcher?.issued();
          const res = real.claim(pool, opts).then((r) => {
            watcher?.done(r.claimed);
            return r;
          });
          lastClaim = res.catch(() => undefined);
          return res;
        },
      });
      // Lets the worker make the claims its timers asked for, and waits for them.
      const settle = async (): Promise<void> => {
        for (let i = 0; i < 3; i++) {
          await new Promise((r) => setImmediate(r));
          await lastClaim;
        }
      };
      const limited = t.pool({ name: "limited", leaseMs, pollIntervalMs: 100, rateLimit: { limit: 1, periodMs: 1000 } }, observed);
      const starts: number[] = [];
      const job = limited.defineAction("job", () => void starts.push(t.clock.now()));
      const x = await limited.enqueueAction(job, { n: 1 }, { runAt: T0 + 5000 });
      const y = await limited.enqueueAction(job, { n: 2 }, { runAt: T0 + 5000 });
      // The pool's configuration is stored now: starting it later needs no statement before its first claim.
      await limited.runOnce();
      await holders.enqueueMutationBatch(
        hold,
        Array.from({ length: harness.connections }, (_, i) => ({ i })),
      );
      await holders.start();
      await Promise.all(holding);

      // Due now; the worker's first claim is made, then waits for a connection while time goes on.
      t.clock.advance(5000);
      const first = nextClaim();
      await limited.start();
      await first.issued;
      t.clock.advance(3000);
      const xStarted = nextEvent(limited, "started", (e) => e.workId === x);
      const yStarted = nextEvent(limited, "started", (e) => e.workId === y);
      release.resolve();
      expect((await first.done).map((r) => r.id)).toEqual([x]);
      expect((await xStarted).startedAt).toBe(T0 + 8000);
      const row = (await t.driver.readWork("limited", [x]))[0]!;
      expect(row.startedAt).toBe(T0 + 8000);
      expect(row.leaseUntil).toBe(T0 + 8000 + leaseMs);

      // The window counts x's start at T0 + 8000: y starts a full period later, not at once.
      await settle();
      await limited.stop();
      t.clock.advance(500);
      expect((await limited.runOnce()).claimed).toBe(0);
      t.clock.advance(500);
      expect((await limited.runOnce()).claimed).toBe(1);
      expect((await yStarted).startedAt).toBe(T0 + 9000);
      expect(starts).toEqual([T0 + 8000, T0 + 9000]);
    });
  });
}
