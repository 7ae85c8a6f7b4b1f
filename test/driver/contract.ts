/**
 * The driver contract: the `Driver` interface exercised directly, without a Workpool, on
 * every store. The conformance suite checks behaviour through the public API; this suite
 * pins down what the core relies on each driver to do (see src/driver/driver.ts).
 * Optional capabilities a driver lacks are skipped, with the reason in the test's name.
 */
import { afterEach, describe, expect, test } from "vitest";
import { DRIVER, type ClaimOptions, type Driver, type NewWork } from "../../src/driver/driver.js";
import type { HarnessStore, StoreHarness } from "../conformance/harness.js";
import { newWork } from "../helpers/new-work.js";

const T0 = Date.UTC(2030, 0, 1);
const POOL = "contract";

/** A new pending row of POOL, due at `runAt`. */
function row(runAt = T0, overrides: Partial<NewWork> = {}): NewWork {
  return newWork(POOL, T0, { runAt, ...overrides });
}

function claimBy(workerId: string, limit: number, now = T0): ClaimOptions {
  return { workerId, clock: () => now, leaseMs: 1000, limit };
}

/** Registers the contract suite for one store. */
export function defineDriverContract<Tx>(harness: StoreHarness<Tx>): void {
  describe(`driver contract: ${harness.name}`, () => {
    const live: HarnessStore<Tx>[] = [];
    afterEach(async () => {
      for (const h of live.splice(0)) await h.dispose();
    });
    async function driver(maxParallelism = 3, keyParallelism: number | null = null): Promise<Driver<Tx>> {
      const h = await harness.create();
      live.push(h);
      const d = h.store[DRIVER];
      await d.migrate();
      await d.ensurePool(POOL, { maxParallelism, logLevel: "REPORT", keyParallelism }, {});
      return d;
    }

    /** Finishes running rows as succeeded, as a result write does. */
    function finish(d: Driver<Tx>, ids: readonly string[], at = T0): Promise<void> {
      return d.transaction((ops) => ops.finish(ids.map((id) => ({ id, result: '{"kind":"success"}', finishedAt: at, ocState: "none" }))));
    }

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
      const inTx = await d.transaction(async (ops) => (ops.claim ? (await ops.claim(POOL, claimBy("c", 10))).claimed : null));
      if (inTx) expect(inTx.map((r) => r.id)).toEqual([hot[3]!.id, other[3]!.id]);
      const counts = await d.counts(POOL, T0);
      expect(counts.running).toBe(inTx ? 5 : 3);
    });

    test("complete() claims for the freed slots within the per-key limit", async (ctx) => {
      const d = await driver(10, 1);
      if (!d.complete) return ctx.skip(`the ${d.dialect} driver has no one-call complete (the core writes results in a transaction)`);
      const rows = [row(T0 - 3, { key: "k" }), row(T0 - 2, { key: "k" }), row(T0 - 1, { key: "k" })];
      await d.insertWork(rows);
      const first = await d.claim(POOL, claimBy("a", 10));
      expect(first.claimed.map((r) => r.id)).toEqual([rows[0]!.id]);
      const res = await d.complete(
        POOL,
        [{ id: rows[0]!.id, attempt: 1, status: "success", result: '{"kind":"success"}', runAt: null }],
        T0,
        claimBy("a", 10),
      );
      expect(res.claim?.claimed.map((r) => r.id)).toEqual([rows[1]!.id]);
      // A retry frees the key too: the next row runs while the first waits out its backoff.
      const retry = await d.complete(
        POOL,
        [{ id: rows[1]!.id, attempt: 1, status: "retrying", result: null, runAt: T0 + 1000 }],
        T0,
        claimBy("a", 10),
      );
      expect(retry.claim?.claimed.map((r) => r.id)).toEqual([rows[2]!.id]);
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
        const claims = [(o: ClaimOptions) => d.claim(POOL, o)];
        if (await d.transaction(async (ops) => ops.claim !== undefined)) claims.push((o) => d.transaction((ops) => ops.claim!(POOL, o)));
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

    test("insertWork resolves a unique key to the pending work that has it: kept, or replaced", async () => {
      const d = await driver(10);
      const first = row(T0 + 1000, { uniqueKey: "u", args: '{"v":1}' });
      expect(await d.insertWork([first])).toEqual([first.id]);
      expect(await d.insertWork([row(T0, { uniqueKey: "u", args: '{"v":2}' })])).toEqual([first.id]);
      expect((await d.readWork(POOL, [first.id]))[0]).toMatchObject({ args: '{"v":1}', runAt: T0 + 1000 });
      const replace = row(T0, { uniqueKey: "u", onConflict: "replace", args: '{"v":3}', priority: 7, key: "k" });
      expect(await d.insertWork([replace])).toEqual([first.id]);
      expect((await d.readWork(POOL, [first.id]))[0]).toMatchObject({ args: '{"v":3}', runAt: T0, priority: 7, key: "k" });
      // Started: the key is free again.
      await d.claim(POOL, claimBy("a", 10));
      const again = row(T0, { uniqueKey: "u" });
      expect(await d.insertWork([again])).toEqual([again.id]);
      expect((await d.counts(POOL, T0)).pending).toBe(1);
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

    test("a locked row shows its current attempt, so a stale result can be told apart before finish", async () => {
      const d = await driver(10);
      const r = row();
      await d.insertWork([r]);
      await d.claim(POOL, claimBy("a", 1));
      // The lease lapses and another worker takes the work: attempt 2.
      await d.transaction(async (ops) => {
        const expired = await ops.lockExpired(POOL, T0 + 2000, 10);
        expect(expired.map((e) => e.id)).toEqual([r.id]);
        await ops.reschedule([{ id: r.id, runAt: T0 + 2000 }]);
      });
      await d.claim(POOL, claimBy("b", 1, T0 + 2000));
      const locked = await d.transaction((ops) => ops.lockWork(POOL, [r.id]));
      expect(locked[0]).toMatchObject({ state: "running", attempt: 2, workerId: "b" });
    });

    test("heartbeat renews this worker's current attempts and reports lost and canceled ones", async () => {
      const d = await driver(10);
      const [x, y] = [row(), row()];
      await d.insertWork([x, y]);
      await d.claim(POOL, claimBy("a", 2));
      await d.transaction((ops) => ops.requestCancel([y.id]));
      const beat = await d.heartbeat(
        POOL,
        "a",
        [
          { id: x.id, attempt: 1 },
          { id: y.id, attempt: 1 },
        ],
        { clock: () => T0 + 1000, leaseMs: 8000 },
      );
      expect(beat).toEqual({ cancelRequested: [{ id: y.id, attempt: 1 }], lost: [] });
      expect((await d.readWork(POOL, [x.id]))[0]!.leaseUntil).toBe(T0 + 9000);
      // Another worker's heartbeat, and one for an attempt that is not current, hold nothing; each lost answer names its attempt.
      const later = { clock: () => T0 + 1500, leaseMs: 8000 };
      expect((await d.heartbeat(POOL, "b", [{ id: x.id, attempt: 1 }], later)).lost).toEqual([{ id: x.id, attempt: 1 }]);
      expect((await d.heartbeat(POOL, "a", [{ id: x.id, attempt: 7 }], later)).lost).toEqual([{ id: x.id, attempt: 7 }]);
      expect((await d.readWork(POOL, [x.id]))[0]!.leaseUntil).toBe(T0 + 9000);
    });

    test("only one worker holds maintenance leadership until it lapses or is released", async () => {
      const d = await driver();
      expect(await d.acquireLeadership(POOL, "a", T0, 1000)).toBe(true);
      expect(await d.acquireLeadership(POOL, "b", T0 + 500, 1000)).toBe(false);
      expect(await d.acquireLeadership(POOL, "a", T0 + 500, 1000)).toBe(true);
      expect(await d.acquireLeadership(POOL, "b", T0 + 1600, 1000)).toBe(true);
      await d.releaseLeadership(POOL, "b");
      expect(await d.acquireLeadership(POOL, "c", T0 + 1700, 1000)).toBe(true);
    });

    test("retention deletes finished rows only once their onComplete is settled", async () => {
      const d = await driver();
      const [plain, withOc] = [row(), row(T0, { onComplete: "oc" })];
      await d.insertWork([plain, withOc]);
      await d.claim(POOL, claimBy("a", 2));
      await d.transaction((ops) =>
        ops.finish([
          { id: plain.id, result: '{"kind":"success"}', finishedAt: T0, ocState: "none" },
          { id: withOc.id, result: '{"kind":"success"}', finishedAt: T0, ocState: "pending" },
        ]),
      );
      expect(await d.deleteFinishedBefore(POOL, T0 + 1, 10)).toBe(1);
      expect(await d.deleteFinishedIds(POOL, [withOc.id])).toEqual([]);
      await d.transaction((ops) => ops.updateOnComplete([{ id: withOc.id, ocState: "done", ocAttempts: 0, ocRunAt: null, ocError: null }]));
      expect(await d.deleteFinishedIds(POOL, [withOc.id])).toEqual([withOc.id]);
    });

    test("complete() writes outcomes fenced by attempt and lets a requested cancel win", async (ctx) => {
      const d = await driver(10);
      if (!d.complete) return ctx.skip(`the ${d.dialect} driver has no one-call complete (the core writes results in a transaction)`);
      const [ok, stale, canceled] = [row(), row(), row()];
      await d.insertWork([ok, stale, canceled]);
      await d.claim(POOL, claimBy("a", 3));
      await d.transaction((ops) => ops.requestCancel([canceled.id]));
      const res = await d.complete(
        POOL,
        [
          { id: ok.id, attempt: 1, status: "success", result: '{"kind":"success","returnValue":1}', runAt: null },
          { id: stale.id, attempt: 5, status: "success", result: '{"kind":"success","returnValue":2}', runAt: null },
          { id: canceled.id, attempt: 1, status: "success", result: '{"kind":"success","returnValue":3}', runAt: null },
        ],
        T0,
        null,
      );
      expect(res.stale).toEqual([stale.id]);
      expect(res.canceled).toEqual([canceled.id]);
      const rows = new Map((await d.readWork(POOL, [ok.id, stale.id, canceled.id])).map((r) => [r.id, r]));
      expect(rows.get(ok.id)).toMatchObject({ state: "finished", result: '{"kind":"success","returnValue":1}' });
      expect(rows.get(stale.id)).toMatchObject({ state: "running", attempt: 1 });
      expect(rows.get(canceled.id)).toMatchObject({ state: "finished", result: '{"kind":"canceled"}' });
    });

    test("insertAndClaim claims keyed work only while its key is under the limit", async (ctx) => {
      const d = await driver(10, 1);
      if (!d.insertAndClaim) return ctx.skip(`the ${d.dialect} driver has no insertAndClaim (enqueue and claim are two transactions)`);
      expect(await d.insertAndClaim(row(T0, { key: "k" }), claimBy("a", 1))).toMatchObject({ state: "running", key: "k" });
      expect(await d.insertAndClaim(row(T0, { key: "k" }), claimBy("a", 1))).toBeNull();
      // The waiting row is due, so other new work waits its turn too.
      expect(await d.insertAndClaim(row(T0, { key: "other" }), claimBy("a", 1))).toBeNull();
      expect((await d.claim(POOL, claimBy("a", 10))).claimed.map((r) => r.key)).toEqual(["other"]);
      expect(await d.insertAndClaim(row(T0, { key: "third", priority: -3 }), claimBy("a", 1))).toMatchObject({
        priority: -3,
        key: "third",
      });
    });

    test("insertAndClaim claims new work only when a slot is free and no other due work waits", async (ctx) => {
      const d = await driver(1);
      if (!d.insertAndClaim) return ctx.skip(`the ${d.dialect} driver has no insertAndClaim (enqueue and claim are two transactions)`);
      const first = await d.insertAndClaim(row(), claimBy("a", 1));
      expect(first).toMatchObject({ state: "running", attempt: 1, workerId: "a" });
      expect(await d.insertAndClaim(row(), claimBy("a", 1))).toBeNull();
      expect((await d.counts(POOL, T0)).pending).toBe(1);
    });

    test("a claim inside a transaction holds to the same limit", async (ctx) => {
      const d = await driver(2);
      await d.insertWork([row(), row(), row()]);
      const claimed = await d.transaction(async (ops) => {
        if (!ops.claim) return null;
        return (await ops.claim(POOL, claimBy("a", 10))).claimed.length;
      });
      if (claimed === null) return ctx.skip(`the ${d.dialect} driver cannot claim inside a transaction`);
      expect(claimed).toBe(2);
    });
  });
}
