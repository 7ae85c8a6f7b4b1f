/** The driver contract, claims: order, limits, per-key limits, the claimed row, hand-backs. */
import { describe, expect, test } from "vitest";
import type { ClaimOptions } from "../../../src/driver/driver.js";
import type { StoreHarness } from "../../conformance/harness.js";
import { claimBy, finish, POOL, row, T0, useDriver } from "./setup.js";

/** Registers the claim tests for one store. */
export function defineClaimContract<Tx>(harness: StoreHarness<Tx>): void {
  describe("claim", () => {
    const driver = useDriver(harness);

    test("claim takes the lowest priority first, then the earliest run_at, then the id", async () => {
      const d = await driver(10);
      const rows = [
        row(T0 - 5, { priority: 0 }),
        row(T0 - 9, { priority: 1 }),
        row(T0 - 1, { priority: -1 }),
        row(T0 - 5, { priority: 0 }),
        row(T0 - 7, { priority: 0 }),
        row(T0 + 100, { priority: -1000 }),
      ];
      await d.insertWork(rows);
      const res = await d.claim(POOL, claimBy("a", 10));
      expect(res.claimed.map((r) => rows.indexOf(rows.find((x) => x.id === r.id)!))).toEqual([2, 4, 0, 3, 1]);
      expect(res.claimed.map((r) => r.priority)).toEqual([-1, 0, 0, 0, 1]);
      expect(res.nextRunAt).toBe(T0 + 100);
    });

    test("claim keeps each key within keyParallelism, takes other work past a key at its limit, and gives that key's work back when an attempt ends", async () => {
      const d = await driver(10, 2);
      const hot = Array.from({ length: 50 }, (_, i) => row(T0 - 100 + i, { key: "hot" }));
      const other = [row(T0 - 10, { key: "cold" }), row(T0 - 9), row(T0 - 8, { key: "cold" }), row(T0 - 7, { key: "cold" })];
      await d.insertWork([...hot, ...other]);
      const first = await d.claim(POOL, claimBy("a", 10));
      expect(first.claimed.map((r) => r.id)).toEqual([hot[0]!.id, hot[1]!.id, other[0]!.id, other[1]!.id, other[2]!.id]);
      expect(first.config.keyParallelism).toBe(2);
      // Both keys at their limit: nothing more, however much of them waits.
      expect((await d.claim(POOL, claimBy("b", 10))).claimed).toEqual([]);
      await finish(d, [hot[0]!.id]);
      const next = await d.claim(POOL, claimBy("b", 10));
      expect(next.claimed.map((r) => r.id)).toEqual([hot[2]!.id]);
      // Through a claim inside a transaction too (the completion path).
      await finish(d, [other[0]!.id, hot[1]!.id]);
      const inTx = await d.transaction(async (ops) => (await ops.claim(POOL, claimBy("c", 10))).claimed);
      expect(inTx.map((r) => r.id)).toEqual([hot[3]!.id, other[3]!.id]);
      const counts = await d.counts(POOL, T0);
      expect(counts.running).toBe(5);
    });

    test("a claimed row is the stored row as the claim left it, every field (with and without a per-key limit)", async () => {
      for (const keyParallelism of [null, 5]) {
        const d = await driver(10, keyParallelism);
        const retry = { maxAttempts: 4, initialBackoffMs: 10, base: 3 };
        const rows = [
          row(T0 - 2, {
            name: "named",
            args: '{"a":1}',
            retry,
            timeoutMs: 900,
            onComplete: "done",
            context: '{"c":2}',
            priority: -4,
            key: "k",
          }),
          row(T0 - 1, { retry }),
        ];
        await d.insertWork(rows);
        // Handed back while a cancel was requested: the next claim must carry the request.
        await d.claim(POOL, claimBy("a", 1));
        await d.transaction(async (ops) => {
          await ops.requestCancel([rows[0]!.id]);
          await ops.release([{ id: rows[0]!.id, attempt: 1 }], T0 - 2);
        });
        const claims = [(o: ClaimOptions) => d.claim(POOL, o), (o: ClaimOptions) => d.transaction((ops) => ops.claim(POOL, o))];
        for (const claim of claims) {
          const res = await claim(claimBy("b", 10, T0 + 5));
          expect(res.claimed).toHaveLength(2);
          const ids = res.claimed.map((r) => r.id);
          const stored = (await d.readWork(POOL, ids)).sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id));
          expect(res.claimed).toEqual(stored);
          expect(res.claimed[0]).toMatchObject({ cancelRequested: true, state: "running", workerId: "b", startedAt: T0 + 5 });
          // Each row owns its fields.
          expect(res.claimed[0]!.retry).not.toBe(res.claimed[1]!.retry);
          await d.transaction((ops) => ops.release(res.claimed, T0 - 2));
        }
      }
    });

    test("a higher or removed keyParallelism gives back the work a claim set aside", async () => {
      const d = await driver(10, 1);
      const rows = Array.from({ length: 4 }, (_, i) => row(T0 - 10 + i, { key: "k" }));
      await d.insertWork(rows);
      expect((await d.claim(POOL, claimBy("a", 10))).claimed).toHaveLength(1);
      expect((await d.claim(POOL, claimBy("a", 10))).claimed).toHaveLength(0);
      await d.ensurePool(POOL, { maxParallelism: 10, logLevel: "REPORT", keyParallelism: null }, { keyParallelism: 2 });
      expect((await d.claim(POOL, claimBy("a", 10))).claimed.map((r) => r.id)).toEqual([rows[1]!.id]);
      await d.ensurePool(POOL, { maxParallelism: 10, logLevel: "REPORT", keyParallelism: null }, { keyParallelism: null });
      expect((await d.claim(POOL, claimBy("a", 10))).claimed.map((r) => r.id)).toEqual([rows[2]!.id, rows[3]!.id]);
    });

    test("claim takes at most the pool's free slots, across workers, in (run_at, id) order", async () => {
      const d = await driver(3);
      const rows = Array.from({ length: 6 }, (_, i) => row(T0 - 10 + i));
      await d.insertWork(rows);
      const first = await d.claim(POOL, claimBy("a", 2));
      expect(first.claimed.map((r) => r.id)).toEqual(rows.slice(0, 2).map((r) => r.id));
      expect(first.claimed.every((r) => r.state === "running" && r.attempt === 1 && r.workerId === "a")).toBe(true);
      const second = await d.claim(POOL, claimBy("b", 10));
      expect(second.claimed.map((r) => r.id)).toEqual([rows[2]!.id]);
      expect(second.running).toBe(3);
      expect((await d.claim(POOL, claimBy("c", 10))).claimed).toEqual([]);
      expect((await d.counts(POOL, T0)).running).toBe(3);
    });

    test("claim leaves work that is not due and reports when the next is due", async () => {
      const d = await driver(10);
      await d.insertWork([row(T0 + 5000)]);
      const res = await d.claim(POOL, claimBy("a", 10));
      expect(res.claimed).toEqual([]);
      expect(res.nextRunAt).toBe(T0 + 5000);
      expect(res.config).toEqual({ maxParallelism: 10, logLevel: "REPORT", keyParallelism: null });
    });

    test("release hands back only the attempt it names, without counting it", async () => {
      const d = await driver(10);
      const r = row();
      await d.insertWork([r]);
      await d.claim(POOL, claimBy("a", 1));
      await d.transaction((ops) => ops.release([{ id: r.id, attempt: 2 }], T0));
      expect((await d.readWork(POOL, [r.id]))[0]).toMatchObject({ state: "running", attempt: 1 });
      await d.transaction((ops) => ops.release([{ id: r.id, attempt: 1 }], T0));
      expect((await d.readWork(POOL, [r.id]))[0]).toMatchObject({ state: "pending", attempt: 0, workerId: null });
    });

    test("a claim inside a transaction holds to the same limit", async () => {
      const d = await driver(2);
      await d.insertWork([row(), row(), row()]);
      const claimed = await d.transaction(async (ops) => (await ops.claim(POOL, claimBy("a", 10))).claimed.length);
      expect(claimed).toBe(2);
    });
  });
}
