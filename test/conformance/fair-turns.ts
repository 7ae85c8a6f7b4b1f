/**
 * Guarantee 9 (within a priority): keys with due work take turns, so a key with a short
 * backlog starts within a few claims whatever another key holds; work without a key is
 * one more key. Priority stays absolute.
 */
import { describe, expect, test } from "vitest";
import type { Workpool, WorkpoolOptions } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext } from "./context.js";

/** The hot key's backlog: the 100,000 due works. */
const HOT = 100_000;
/** Rows per enqueueActionBatch call while filling the backlog. */
const BATCH = 5_000;

/** Starts in the order the pool reports them: each work's key ("-" for none). */
function recordStarts<Tx>(pool: Workpool<Tx>): string[] {
  const starts: string[] = [];
  pool.on("started", (e) => starts.push(e.key ?? "-"));
  return starts;
}

export function defineFairTurnTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("keys take turns", () => {
    const ctx = useTestContext(harness);

    /**
     * Key "a" holds `hot` due works, then the small key (`small`, undefined: no key) gets
     * 10; the pool is stepped with runOnce() until 20 works started: all 10 of the small
     * key's are among them.
     */
    async function smallKeyStartsEarly(options: WorkpoolOptions, hot: number, small: string | undefined): Promise<void> {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 10, ...options });
      const job = pool.defineAction("job", () => undefined);
      for (let i = 0; i < hot; i += BATCH) {
        await pool.enqueueActionBatch(job, new Array<null>(Math.min(BATCH, hot - i)).fill(null), { key: "a" });
      }
      t.clock.advance(1);
      await pool.enqueueActionBatch(job, new Array<null>(10).fill(null), small === undefined ? {} : { key: small });
      const starts = recordStarts(pool);
      while (starts.length < 20) expect((await pool.runOnce()).claimed).toBeGreaterThan(0);
      const first = starts.slice(0, 20);
      expect(first.filter((k) => k === (small ?? "-")).length).toBe(10);
    }

    test(`a key with 10 due works starts them all within 2 × maxParallelism starts behind another key's ${HOT}`, async () => {
      await smallKeyStartsEarly({}, HOT, "b");
    }, 60_000);

    test("so does a key that sorts before the busy one, and work without a key", async () => {
      await smallKeyStartsEarly({}, 2_000, "0");
      await smallKeyStartsEarly({}, 2_000, undefined);
    });

    test("so does a key under a per-key limit above its share", async () => {
      await smallKeyStartsEarly({ keyParallelism: 8 }, HOT, "b");
    }, 60_000);

    test("turns go round every key with due work, from the key after the last one served", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 2 });
      const job = pool.defineAction("job", () => undefined);
      for (const key of ["a", "b", "c"]) await pool.enqueueActionBatch(job, [null, null, null], { key });
      await pool.enqueueActionBatch(job, [null, null, null]);
      const starts = recordStarts(pool);
      while ((await pool.runOnce()).claimed > 0);
      // Within one claim the pool reports starts in claim order (run_at, id): compare by claim.
      const claims = [0, 2, 4, 6, 8, 10].map((i) => [...starts.slice(i, i + 2)].sort().join(""));
      expect(claims).toEqual(["ab", "-c", "ab", "-c", "ab", "-c"]);
    });

    test("a lower priority value still goes first, whatever the keys' turns", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 4 });
      const job = pool.defineAction("job", () => undefined);
      await pool.enqueueActionBatch(job, [null, null, null], { key: "a", priority: 1 });
      await pool.enqueueActionBatch(job, [null, null, null], { key: "b" });
      await pool.enqueueActionBatch(job, [null, null, null], { key: "c", priority: 1 });
      const starts = recordStarts(pool);
      await pool.runOnce();
      expect(starts.length).toBe(4);
      expect(starts.filter((k) => k === "b").length).toBe(3);
    });
  });
}
