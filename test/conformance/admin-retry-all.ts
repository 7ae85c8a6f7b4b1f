/**
 * admin.retryAll(): the bulk retry. It retries a pool's matching failed or canceled work
 * as retry() does, page by page (500 per transaction), each work at most once: a second
 * run, or a run after one that stopped part way, retries only the rest; dryRun writes
 * nothing; bad input is refused before anything is written.
 */
import { describe, expect, test } from "vitest";
import { workpoolAdmin, type RetryAllResult } from "../../src/admin/index.js";
import { InvalidArgumentError, type OnCompleteArgs, type Workpool } from "../../src/index.js";
import { csrfOf, postAction, serveDashboard } from "../helpers/dashboard.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext, withDriver, type TestContext } from "./context.js";
import { drain, workflowPool } from "./workflow-kit.js";

/** A worker's pool whose jobs fail until told to succeed, with an onComplete that records each delivery. */
async function workerPool<Tx>(harness: StoreHarness<Tx>, t: TestContext<Tx>) {
  await harness.createAppTable(t.h);
  const pool = t.pool({ name: "jobs", maxParallelism: 100 });
  const seen: OnCompleteArgs[] = [];
  const record = pool.defineOnComplete("record", (c, args) => {
    seen.push(args);
    harness.insertAppRow(c.tx, args.workId);
  });
  let failing = true;
  const job = pool.defineAction("job", (_c, args: { n: number }) => {
    if (failing) throw new Error(`job ${args.n} failed`);
    return args.n;
  });
  const other = pool.defineAction("other", () => {
    if (failing) throw new Error("other failed");
    return 0;
  });
  return { pool, seen, record, job, other, succeed: () => (failing = false) };
}

/** `n` canceled work of pool "jobs" (canceled while pending: no attempt is run). */
async function canceledWork<Tx>(t: TestContext<Tx>, pool: Workpool<Tx>, n: number): Promise<string[]> {
  const handle = pool.defineAction("parked", () => 1);
  const ids = await pool.enqueueActionBatch(
    handle,
    Array.from({ length: n }, (_, i) => i),
    { runAfter: 3_600_000 },
  );
  expect(await workpoolAdmin(t.h.store, { clock: t.clock }).cancelAll("jobs")).toBe(n);
  return ids;
}

const sorted = (ids: readonly string[]): string[] => [...ids].sort();

export function defineAdminRetryAllTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("admin: retryAll", () => {
    const ctx = useTestContext(harness);

    test("retries the matching failed work as retry() does, by handler, key and finish time; dryRun lists it and writes nothing", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const w = await workerPool(harness, t);
      const opts = { onComplete: w.record, context: { c: 1 }, name: "first", timeoutMs: 9000, priority: 3 };
      const early = await w.pool.enqueueActionBatch(w.job, [{ n: 1 }, { n: 2 }], opts);
      await w.pool.runOnce();
      t.clock.advance(1000);
      const middle = t.clock.now();
      const keyed = await w.pool.enqueueAction(w.job, { n: 3 }, { key: "k" });
      const otherId = await w.pool.enqueueAction(w.other, {});
      await w.pool.runOnce();
      t.clock.advance(1000);
      const late = await w.pool.enqueueAction(w.job, { n: 4 });
      await w.pool.runOnce();
      // Neither canceled nor pending work, nor another pool's failed work, is failed work of "jobs".
      const [canceled] = await canceledWork(t, t.pool({ name: "jobs" }), 1);
      const pending = await w.pool.enqueueAction(w.job, { n: 5 }, { runAfter: 3_600_000 });
      const elsewhere = t.pool({ name: "elsewhere" });
      const elsewhereId = await elsewhere.enqueueAction(
        elsewhere.defineAction("job", () => {
          throw new Error("no");
        }),
        {},
      );
      await elsewhere.runOnce();
      const rows = await harness.countWorkRows(t.h);

      const failed = sorted([...early, keyed, otherId, late]);
      const preview = await admin.retryAll("jobs", { state: "failed" }, { dryRun: true });
      expect(preview).toEqual({ dryRun: true, count: 5, ids: failed });
      expect((await admin.retryAll("jobs", { state: "failed", handler: "other" }, { dryRun: true })).ids).toEqual([otherId]);
      expect((await admin.retryAll("jobs", { state: "failed", key: "k" }, { dryRun: true })).ids).toEqual([keyed]);
      // finishedAfter is inclusive, finishedBefore exclusive.
      const range = { state: "failed", finishedAfter: middle, finishedBefore: middle + 1000 } as const;
      expect((await admin.retryAll("jobs", range, { dryRun: true })).ids).toEqual(sorted([keyed, otherId]));
      expect((await admin.retryAll("jobs", { state: "failed", finishedBefore: middle }, { dryRun: true })).ids).toEqual(sorted(early));
      expect((await admin.retryAll("jobs", { state: "failed", finishedAfter: middle + 1000 }, { dryRun: true })).ids).toEqual([late]);
      expect((await admin.retryAll("jobs", { state: "canceled" }, { dryRun: true })).ids).toEqual([canceled]);
      expect(await admin.retryAll("jobs", { state: "failed", handler: "job", key: "nope" }, { dryRun: true })).toEqual({
        dryRun: true,
        count: 0,
        ids: [],
      });
      expect(await harness.countWorkRows(t.h)).toBe(rows);
      for (const id of failed) expect((await admin.get(id))!.retriedAs).toBeNull();

      const first = await admin.retryAll("jobs", { state: "failed", handler: "job", finishedBefore: middle });
      expect(first.dryRun).toBe(false);
      expect(first.count).toBe(2);
      expect(first.retried.map((r) => r.id)).toEqual(sorted(early));
      const rest = await admin.retryAll("jobs", { state: "failed" });
      expect(rest.retried.map((r) => r.id)).toEqual(sorted([keyed, otherId, late]));
      expect(await harness.countWorkRows(t.h)).toBe(rows + 5);
      for (const { id, newId } of [...first.retried, ...rest.retried]) {
        const [old, made] = [(await admin.get(id))!, (await admin.get(newId))!];
        expect(old).toMatchObject({ state: "finished", resultKind: "failed", retriedAs: newId });
        // The same work once more, as retry() makes it: due now, never attempted.
        expect(made).toMatchObject({
          state: "pending",
          attempts: 0,
          runAt: t.clock.now(),
          enqueuedAt: t.clock.now(),
          retriedAs: null,
          handler: old.handler,
          name: old.name,
          args: old.args,
          context: old.context,
          key: old.key,
          priority: old.priority,
          timeoutMs: old.timeoutMs,
          retry: old.retry,
          onComplete: old.onComplete === null ? null : { handler: "record", state: "pending" },
        });
      }
      expect((await admin.get(early[0]!))!).toMatchObject({ name: "first", priority: 3, context: { c: 1 } });
      for (const id of [pending, canceled, elsewhereId]) expect((await admin.get(id!))!.retriedAs).toBeNull();

      // The new work runs; each work's onComplete ran exactly once.
      w.succeed();
      for (let i = 0; i < 3; i++) {
        await w.pool.runOnce();
        t.clock.advance(1000);
      }
      for (const { newId } of [...first.retried, ...rest.retried]) expect((await admin.get(newId))!.resultKind).toBe("success");
      const newEarly = first.retried.map((r) => r.newId);
      expect(w.seen.map((s) => `${s.workId}:${s.result.kind}`).sort()).toEqual(
        [...early.map((id) => `${id}:failed`), ...newEarly.map((id) => `${id}:success`)].sort(),
      );
      expect(await harness.countAppRows(t.h)).toBe(4);
    });

    test("twice retries nothing twice; work already retried, one by one or by a run stopped part way, is left out", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const w = await workerPool(harness, t);
      const ids = sorted(await w.pool.enqueueActionBatch(w.job, [{ n: 1 }, { n: 2 }, { n: 3 }]));
      await w.pool.runOnce();
      const single = await admin.retry(ids[1]!);
      const all = await admin.retryAll("jobs", { state: "failed" });
      expect(all.retried.map((r) => r.id)).toEqual([ids[0], ids[2]]);
      expect(all.retried.map((r) => r.newId)).not.toContain(single);
      expect(await admin.retryAll("jobs", { state: "failed" })).toEqual({ dryRun: false, count: 0, retried: [] });
      expect(await admin.retryAll("jobs", { state: "failed" }, { dryRun: true })).toEqual({ dryRun: true, count: 0, ids: [] });
      expect(await harness.countWorkRows(t.h)).toBe(6);
      // The new work, once it fails, is failed work not yet retried: a later run takes it.
      await w.pool.runOnce();
      const next = await admin.retryAll("jobs", { state: "failed" });
      expect(next.retried.map((r) => r.id)).toEqual(sorted([single, ...all.retried.map((r) => r.newId)]));
      expect(await harness.countWorkRows(t.h)).toBe(9);
    });

    test("pages: 1,100 canceled work is retried whole; a run that fails after its first page leaves that page done and the rest to the next run", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "jobs" });
      const ids = sorted(await canceledWork(t, pool, 1100));
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      expect((await admin.retryAll("jobs", { state: "canceled" }, { dryRun: true })).ids).toEqual(ids);
      expect((await admin.retryAll("jobs", { state: "failed" }, { dryRun: true })).count).toBe(0);

      // The store fails the second page's transaction, as a crash between two pages would leave it.
      let pages = 0;
      const failing = withDriver(t.h.store, {
        redrive: (real, ...args) => {
          if (++pages === 2) return Promise.reject(new Error("connection lost"));
          return real.redrive(...args);
        },
      });
      await expect(workpoolAdmin(failing, { clock: t.clock }).retryAll("jobs", { state: "canceled" })).rejects.toThrow("connection lost");
      expect(await harness.countWorkRows(t.h)).toBe(1600);
      const retriedFirst = ids.slice(0, 500);
      for (const id of [retriedFirst[0]!, retriedFirst[499]!]) expect((await admin.get(id))!.retriedAs).not.toBeNull();
      expect((await admin.get(ids[500]!))!.retriedAs).toBeNull();

      const rest = await admin.retryAll("jobs", { state: "canceled" });
      expect(rest.count).toBe(600);
      expect(rest.retried.map((r) => r.id)).toEqual(ids.slice(500));
      expect(new Set(rest.retried.map((r) => r.newId)).size).toBe(600);
      expect(await harness.countWorkRows(t.h)).toBe(2200);
      expect((await admin.pools())[0]!.counts).toMatchObject({ pending: 1100, canceled: 1100 });
      expect((await admin.retryAll("jobs", { state: "canceled" })).count).toBe(0);
    });

    test("concurrent runs, from one store or two, retry each work once between them", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "jobs" });
      const ids = await canceledWork(t, pool, 600);
      const elsewhere = await harness.secondStore(t.h);
      try {
        const runs = await Promise.all([
          workpoolAdmin(t.h.store, { clock: t.clock }).retryAll("jobs", { state: "canceled" }),
          workpoolAdmin(t.h.store, { clock: t.clock }).retryAll("jobs", { state: "canceled" }),
          workpoolAdmin(elsewhere, { clock: t.clock }).retryAll("jobs", { state: "canceled" }),
        ]);
        const retried = runs.flatMap((r: RetryAllResult) => r.retried);
        expect(sorted(retried.map((r) => r.id))).toEqual(sorted(ids));
        expect(new Set(retried.map((r) => r.newId)).size).toBe(600);
        expect(await harness.countWorkRows(t.h)).toBe(1200);
      } finally {
        await elsewhere.close();
      }
    });

    test("work that finishes while a run goes on (its own new work among it) is left for the next run", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "jobs" });
      const ids = await canceledWork(t, pool, 600);
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      // After the first page, its new work is canceled at once: canceled work not yet retried, with newer ids.
      let made: string[] = [];
      const busy = withDriver(t.h.store, {
        redrive: async (real, ...args) => {
          const done = await real.redrive(...args);
          if (!made.length) {
            made = done.map((p) => p.newId);
            expect(await admin.cancelAll("jobs")).toBe(500);
          }
          return done;
        },
      });
      const run = await workpoolAdmin(busy, { clock: t.clock }).retryAll("jobs", { state: "canceled" });
      expect(run.retried.map((r) => r.id)).toEqual(sorted(ids));
      for (const id of [made[0]!, made[499]!]) expect((await admin.get(id))!).toMatchObject({ resultKind: "canceled", retriedAs: null });
      expect((await admin.retryAll("jobs", { state: "canceled" }, { dryRun: true })).ids).toEqual(sorted(made));
    });

    test("bad input: an unknown state, an impossible time range, unknown keys: InvalidArgumentError naming the field, nothing written", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const w = await workerPool(harness, t);
      const id = await w.pool.enqueueAction(w.job, { n: 1 });
      await w.pool.runOnce();
      const bad: [string, () => Promise<unknown>][] = [
        ["state", () => admin.retryAll("jobs", { state: "success" as "failed" })],
        ["state", () => admin.retryAll("jobs", { state: "pending" as "failed" })],
        ["state", () => admin.retryAll("jobs", { state: "FAILED" as "failed" })],
        ["state", () => admin.retryAll("jobs", {} as { state: "failed" })],
        ["filter", () => admin.retryAll("jobs", undefined as unknown as { state: "failed" })],
        ["finishedBefore", () => admin.retryAll("jobs", { state: "failed", finishedAfter: 2000, finishedBefore: 1000 })],
        ["finishedBefore", () => admin.retryAll("jobs", { state: "failed", finishedAfter: 1000, finishedBefore: 1000 })],
        ["finishedAfter", () => admin.retryAll("jobs", { state: "failed", finishedAfter: Number.NaN })],
        ["finishedBefore", () => admin.retryAll("jobs", { state: "failed", finishedBefore: "yesterday" as unknown as number })],
        ["handler", () => admin.retryAll("jobs", { state: "failed", handler: "" })],
        ["key", () => admin.retryAll("jobs", { state: "failed", key: 7 as unknown as string })],
        ["before", () => admin.retryAll("jobs", { state: "failed", before: 1 } as { state: "failed" })],
        ["pool", () => admin.retryAll("no pool!", { state: "failed" })],
        ["dryRun", () => admin.retryAll("jobs", { state: "failed" }, { dryRun: "yes" as unknown as boolean })],
        ["force", () => admin.retryAll("jobs", { state: "failed" }, { force: true } as { dryRun?: false })],
      ];
      for (const [field, call] of bad) {
        const error = await call().then(
          () => null,
          (e: unknown) => e,
        );
        expect(error, field).toBeInstanceOf(InvalidArgumentError);
        expect(error, field).toMatchObject({ field });
      }
      await expect(admin.retryAll("jobs", { state: "pending" as "failed" })).rejects.toThrow(
        /state: must be "failed" or "canceled".*got "pending"/,
      );
      await expect(admin.retryAll("jobs", { state: "failed", finishedAfter: 2000, finishedBefore: 1000 })).rejects.toThrow(
        /finishedBefore: must be later than finishedAfter \(2000\)/,
      );
      expect(await harness.countWorkRows(t.h)).toBe(1);
      expect((await admin.get(id))!.retriedAs).toBeNull();
      // A pool with no such work (or none at all) has nothing to retry.
      expect(await admin.retryAll("nothing-here", { state: "failed" })).toEqual({ dryRun: false, count: 0, retried: [] });
    });
    test("the dashboard's retry-all action: a dry run counts, a run retries; it takes the actions' guards and checks its body whole", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "jobs" });
      const ids = sorted(await canceledWork(t, pool, 3));
      const dash = await serveDashboard({ store: t.h.store, clock: t.clock });
      const readOnly = await serveDashboard({ store: t.h.store, readOnly: true });
      try {
        const ok = { "x-workpool-csrf": await csrfOf(dash.url) };
        const body = { pool: "jobs", state: "canceled" };
        expect(await postAction(dash.url, "retry-all", body)).toMatchObject({ status: 403 });
        expect(await postAction(readOnly.url, "retry-all", body, { "x-workpool-csrf": await csrfOf(readOnly.url) })).toMatchObject({
          status: 403,
          body: { error: "this dashboard is read-only" },
        });
        for (const [bad, field] of [
          [{ ...body, state: "success" }, "state"],
          [{ ...body, finishedAfter: 5, finishedBefore: 5 }, "finishedBefore"],
          [{ ...body, dryRun: "yes" }, "dryRun"],
          [{ ...body, search: "x" }, "body.search"],
          [{ state: "canceled" }, "pool"],
        ] as const) {
          expect(await postAction(dash.url, "retry-all", bad, ok)).toMatchObject({ status: 400, body: { field } });
        }
        expect(await harness.countWorkRows(t.h)).toBe(3);
        expect(await postAction(dash.url, "retry-all", { ...body, dryRun: true }, ok)).toEqual({
          status: 200,
          body: { dryRun: true, count: 3 },
        });
        expect(await harness.countWorkRows(t.h)).toBe(3);
        const done = await postAction(dash.url, "retry-all", body, ok);
        expect(done).toMatchObject({ status: 200, body: { dryRun: false, count: 3 } });
        expect((done.body as RetryAllResult).retried.map((r) => r.id)).toEqual(ids);
        expect(await postAction(dash.url, "retry-all", body, ok)).toMatchObject({ status: 200, body: { count: 0, retried: [] } });
        expect(await harness.countWorkRows(t.h)).toBe(6);
      } finally {
        await dash.close();
        await readOnly.close();
      }
    });
    test("a workflow's own work is left out (a journaled step never runs again); the same handler's plain work is not", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const { pool, wf } = workflowPool(t, { name: "jobs" });
      const boom = pool.defineAction("boom", () => {
        throw new Error("boom");
      });
      const flow = wf.define("flow", async (step) => {
        await step.runAction(boom, {}, { retry: false });
      });
      const run = await wf.start(flow, {});
      const plain = await pool.enqueueAction(boom, {});
      await drain(pool);
      expect(await wf.status(run)).toMatchObject({ state: "failed" });
      const stepWork = (await admin.workflowSteps(run))![0]!.workId!;
      expect((await admin.get(stepWork))!).toMatchObject({ handler: "boom", resultKind: "failed" });
      expect((await admin.retryAll("jobs", { state: "failed" }, { dryRun: true })).ids).toEqual([plain]);
      expect((await admin.retryAll("jobs", { state: "failed", handler: "boom" })).retried.map((r) => r.id)).toEqual([plain]);
      expect((await admin.get(stepWork))!.retriedAs).toBeNull();
    });
  });
}
