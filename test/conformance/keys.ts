/**
 * Guarantee 10: at no instant do more than keyParallelism attempts with one key run in
 * the pool, across every worker, while maxParallelism still holds; a key at its limit
 * never blocks other keys; configure({ keyParallelism }) changes it for every worker.
 */
import { describe, expect, test } from "vitest";
import type { Workpool } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { deferred, useTestContext } from "./context.js";

/** Counts what runs at once, overall and per key, as the handlers see it. */
class LiveCounter {
  live = 0;
  peak = 0;
  readonly perKey = new Map<string, number>();
  readonly peakPerKey = new Map<string, number>();
  enter(key: string): void {
    this.peak = Math.max(this.peak, ++this.live);
    const n = (this.perKey.get(key) ?? 0) + 1;
    this.perKey.set(key, n);
    this.peakPerKey.set(key, Math.max(this.peakPerKey.get(key) ?? 0, n));
  }
  leave(key: string): void {
    this.live--;
    this.perKey.set(key, this.perKey.get(key)! - 1);
  }
}

/** Waits until `pool` runs `n` attempts in this process. */
async function untilRunning<Tx>(pool: Workpool<Tx>, n: number): Promise<void> {
  while (pool.running < n) await new Promise((r) => setImmediate(r));
}

export function defineKeyTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("per-key parallelism", () => {
    const ctx = useTestContext(harness);

    test("work set aside at its key's limit comes back when the key's next work leaves the queue without running (canceled)", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "park", maxParallelism: 2, keyParallelism: 1 });
      const job = pool.defineAction("job", () => undefined);
      await pool.runOnce(); // stores the pool's configuration
      const claim = async (): Promise<string[]> =>
        (await t.driver.claim("park", { workerId: "w", clock: () => t.clock.now(), leaseMs: 30_000, limit: 10 })).claimed.map((r) => r.id);
      const [a1, a2, a3] = await pool.enqueueActionBatch(job, [{}, {}, {}], { key: "k" });
      const b1 = await pool.enqueueAction(job, {});
      // a1 runs, a2 and a3 are set aside at k's limit, b1 takes the second slot.
      expect((await claim()).sort()).toEqual([a1, b1].sort());
      // a1 goes back to the queue (due later): k is free, and urgent work b0 takes the free slot,
      // so the claim gives a2 back to the queue without taking it.
      await t.driver.transaction((ops) => ops.release([{ id: a1!, attempt: 1 }], t.clock.now() + 60_000));
      const b0 = await pool.enqueueAction(job, {}, { priority: -1 });
      expect(await claim()).toEqual([b0]);
      // a2 and a1 are canceled before they run: a3 must not wait for an attempt of k that never comes.
      expect(await pool.cancel(a2!)).toBe(true);
      expect(await pool.cancel(a1!)).toBe(true);
      await t.driver.transaction(async (ops) => {
        const rows = await ops.lockWork("park", [b0, b1]);
        await ops.finish(
          rows.map((r) => ({
            id: r.id,
            result: JSON.stringify({ kind: "success", returnValue: null }),
            finishedAt: t.clock.now(),
            ocState: "none",
          })),
        );
      });
      expect(await claim()).toEqual([a3]);
    });

    test("each key runs at most keyParallelism at once, under maxParallelism, and a key at its limit blocks no other", async () => {
      const t = await ctx();
      const a = t.pool({ name: "k", maxParallelism: 6, keyParallelism: 2 });
      const b = t.pool({ name: "k" });
      const counter = new LiveCounter();
      let gate = deferred();
      const fn = async (_c: unknown, args: { key: string }) => {
        counter.enter(args.key);
        await gate.promise;
        counter.leave(args.key);
      };
      const job = a.defineAction("job", fn);
      b.defineAction("job", fn);
      // The hot key's backlog comes first in claim order; the other keys after it.
      const hot = Array.from({ length: 40 }, () => ({ key: "hot" }));
      await a.enqueueActionBatch(job, hot, { key: "hot" });
      await a.enqueueActionBatch(job, [{ key: "x" }, { key: "x" }, { key: "x" }], { key: "x" });
      await a.enqueueAction(job, { key: "-" });
      await a.enqueueAction(job, { key: "y" }, { key: "y" });
      let claims = 0;
      const claim = t.driver.claim.bind(t.driver);
      t.driver.claim = async (pool, opts) => {
        const r = await claim(pool, opts);
        claims++;
        return r;
      };
      const stepA = a.runOnce();
      const stepB = b.runOnce();
      while (claims < 2) await new Promise((r) => setImmediate(r));
      expect(Object.fromEntries(counter.perKey)).toEqual({ hot: 2, x: 2, "-": 1, y: 1 });
      expect((await t.driver.counts("k", t.clock.now())).running).toBe(6);
      gate.resolve();
      await Promise.all([stepA, stepB]);
      gate = deferred();
      gate.resolve();
      let done = 6;
      while (done < 45) {
        const [ra, rb] = await Promise.all([a.runOnce(), b.runOnce()]);
        expect(ra.claimed + rb.claimed).toBeGreaterThan(0);
        done += ra.claimed + rb.claimed;
      }
      expect(counter.peak).toBe(6);
      expect(Object.fromEntries(counter.peakPerKey)).toEqual({ hot: 2, x: 2, "-": 1, y: 1 });
      expect(await t.driver.counts("k", t.clock.now())).toMatchObject({ pending: 0, running: 0 });
    });

    test("a serial key (keyParallelism 1) runs its work one at a time in claim order while other keys run", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 3, keyParallelism: 1 });
      const ran: string[] = [];
      const job = pool.defineAction("job", (_c, name: string) => void ran.push(name));
      await pool.enqueueAction(job, "u1-low", { key: "user:1", priority: 5 });
      await pool.enqueueAction(job, "u1-a", { key: "user:1" });
      await pool.enqueueAction(job, "u1-b", { key: "user:1" });
      await pool.enqueueAction(job, "u2-a", { key: "user:2" });
      await pool.enqueueAction(job, "free", {});
      expect((await pool.runOnce()).claimed).toBe(3);
      expect([...ran].sort()).toEqual(["free", "u1-a", "u2-a"]);
      expect((await pool.runOnce()).claimed).toBe(1);
      expect((await pool.runOnce()).claimed).toBe(1);
      expect(ran.slice(3)).toEqual(["u1-b", "u1-low"]);
    });

    test("an attempt waiting to retry frees its key: the key's next work runs meanwhile", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 5, keyParallelism: 1 });
      const ran: string[] = [];
      let fails = 1;
      const job = pool.defineAction("job", (_c, name: string) => {
        ran.push(name);
        if (name === "first" && fails-- > 0) throw new Error("try again");
      });
      const retry = { maxAttempts: 2, initialBackoffMs: 1000, base: 2 };
      await pool.enqueueAction(job, "first", { key: "k", retry });
      await pool.enqueueAction(job, "second", { key: "k" });
      await pool.runOnce();
      await pool.runOnce();
      expect(ran).toEqual(["first", "second"]);
      t.clock.advance(1000);
      await pool.runOnce();
      expect(ran).toEqual(["first", "second", "first"]);
    });

    test("configure({ keyParallelism }) changes the limit for every worker, and null removes it", async () => {
      const t = await ctx();
      const a = t.pool({ name: "c", maxParallelism: 10 });
      const b = t.pool({ name: "c" });
      const c = t.pool({ name: "c" });
      const counter = new LiveCounter();
      const gate = deferred();
      const fn = async (_c: unknown, args: { key: string }) => {
        counter.enter(args.key);
        await gate.promise;
        counter.leave(args.key);
      };
      const job = a.defineAction("job", fn);
      b.defineAction("job", fn);
      c.defineAction("job", fn);
      await a.enqueueActionBatch(
        job,
        Array.from({ length: 5 }, () => ({ key: "k" })),
        { key: "k" },
      );
      await a.configure({ keyParallelism: 1 });
      expect((await t.driver.readPoolConfig("c"))?.keyParallelism).toBe(1);
      const first = a.runOnce();
      await untilRunning(a, 1);
      // The claim set the key's other work aside at the limit of 1; a higher limit gives it back.
      await a.configure({ keyParallelism: 3 });
      const second = b.runOnce();
      await untilRunning(b, 2);
      expect(counter.perKey.get("k")).toBe(3);
      await b.configure({ keyParallelism: null });
      const third = c.runOnce();
      await untilRunning(c, 2);
      expect(counter.perKey.get("k")).toBe(5);
      expect((await t.driver.readPoolConfig("c"))?.keyParallelism).toBeNull();
      gate.resolve();
      await Promise.all([first, second, third]);
      expect(counter.peakPerKey.get("k")).toBe(5);
    });

    test("keyParallelism is validated in the constructor and in configure()", async () => {
      const t = await ctx();
      for (const bad of [0, 1.5, 10_001, Number.NaN, "2", null]) {
        expect(() => t.pool({ keyParallelism: bad as never })).toThrow(/keyParallelism: must be an integer from 1 to 10000, got/);
      }
      const pool = t.pool({ name: "v", keyParallelism: 2 });
      await pool.runOnce();
      await expect(pool.configure({ keyParallelism: 0 })).rejects.toThrow(
        /keyParallelism: must be an integer from 1 to 10000, or null for no per-key limit, got 0/,
      );
      expect((await t.driver.readPoolConfig("v"))?.keyParallelism).toBe(2);
    });
  });
}
