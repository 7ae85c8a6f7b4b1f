/**
 * The outcome rule is written twice: in decide() (TypeScript), used by the transaction
 * path, and in each driver's one-call complete() (SQL), used for batches without
 * onComplete: PostgreSQL's complete() function, SQLite's fenced UPDATEs (a requested
 * cancel wins there too). This test sends the same outcomes through both paths, on twin
 * rows of two pools, and compares the rows (attempt logs included) and report counters they leave.
 */
import { afterEach, expect, test } from "vitest";
import { DRIVER, type Driver, type NewWork, type WorkRow } from "../../src/driver/driver.js";
import type { WorkDetailRow } from "../../src/driver/admin-ops.js";
import { EventHub, PoolLogger } from "../../src/events.js";
import { HandlerRegistry } from "../../src/handlers.js";
import { finishInOneCall, finishInTransaction, type FinishEntry } from "../../src/internal/transitions/finish.js";
import type { AttemptOutcome } from "../../src/internal/transitions/outcome.js";
import type { PoolRuntime } from "../../src/internal/runtime.js";
import { Tracing } from "../../src/internal/tracing.js";
import { resolveOptions } from "../../src/options.js";
import { ManualClock } from "../../src/index.js";
import { quietLogger, T0 } from "../helpers/common.js";
import { postgresHarness } from "../conformance/harness-postgres.js";
import { sqliteHarness } from "../conformance/harness-sqlite.js";
import type { HarnessStore, StoreHarness } from "../conformance/harness.js";
import { SKIP_POSTGRES, useSharedServer } from "../postgres/helpers.js";
import { newWork } from "../helpers/new-work.js";

if (!SKIP_POSTGRES) useSharedServer();

const live: HarnessStore<unknown>[] = [];
afterEach(async () => {
  for (const h of live.splice(0)) await h.dispose();
});

function runtime(driver: Driver<unknown>, pool: string, clock: ManualClock): PoolRuntime<unknown> {
  const options = resolveOptions({
    name: pool,
    clock,
    random: () => 0.37,
    logger: quietLogger,
    defaultRetryBehavior: { maxAttempts: 3, initialBackoffMs: 100, base: 2 },
  });
  const logger = new PoolLogger(options.logger, options.logLevel);
  return {
    pool,
    driver,
    options,
    logger,
    events: new EventHub(logger),
    handlers: new HandlerRegistry(pool),
    tracing: new Tracing(null),
    workerId: "w",
  };
}

/** The cases: how each row's attempt ended, and what happens to its row before the result arrives. */
const CASES: { name: string; retry: NewWork["retry"]; outcome: AttemptOutcome; attempts?: number; before?: "cancel" | "rescue" }[] = [
  { name: "success", retry: null, outcome: { kind: "success", returnValue: { n: 1 } } },
  {
    name: "failure with retries left",
    retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 },
    outcome: { kind: "failed", error: "boom", retryable: true, detail: { name: "TypeError", stack: "TypeError: boom\n    at job" } },
  },
  {
    name: "failure on the last attempt",
    retry: { maxAttempts: 1, initialBackoffMs: 100, base: 2 },
    outcome: { kind: "failed", error: "boom", retryable: true },
  },
  {
    name: "NonRetryableError",
    retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 },
    outcome: { kind: "failed", error: "stop", retryable: false },
  },
  { name: "no retry behaviour", retry: null, outcome: { kind: "failed", error: "once", retryable: true } },
  { name: "canceled by its abort", retry: null, outcome: { kind: "canceled" } },
  { name: "cancel racing a success", retry: null, outcome: { kind: "success", returnValue: 2 }, before: "cancel" },
  {
    name: "cancel racing a retryable failure",
    retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 },
    outcome: { kind: "failed", error: "x", retryable: true, detail: { name: "Error" } },
    before: "cancel",
  },
  {
    name: "stale attempt (rescued meanwhile)",
    retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 },
    outcome: { kind: "success", returnValue: 3 },
    before: "rescue",
  },
];

/** Inserts one row per case in `pool`, claims them, applies each case's `before`; returns the claimed rows. */
async function prepare(driver: Driver<unknown>, pool: string): Promise<WorkRow[]> {
  await driver.ensurePool(pool, { maxParallelism: 100, logLevel: "REPORT", keyParallelism: null }, {});
  // Ids made in one millisecond increase: the rows sort in case order.
  const rows: NewWork[] = CASES.map((c, i) => newWork(pool, T0, { runAt: T0 - 100 + i, retry: c.retry }));
  await driver.insertWork(rows);
  const claimed = (await driver.claim(pool, { workerId: "w", clock: () => T0, leaseMs: 1000, limit: 100 })).claimed;
  const byId = new Map(claimed.map((r) => [r.id, r]));
  for (const [i, c] of CASES.entries()) {
    const id = rows[i]!.id;
    if (c.before === "cancel") await driver.transaction((ops) => ops.requestCancel([id]));
    if (c.before === "rescue") {
      await driver.transaction((ops) => ops.reschedule([{ id, runAt: T0 }]));
      await driver.transaction((ops) => ops.claim!(pool, { workerId: "other", clock: () => T0, leaseMs: 1000, limit: 1 }));
    }
  }
  return rows.map((r) => byId.get(r.id)!);
}

/** The columns a transition writes, without the id and pool (the attempt log parsed: PostgreSQL orders a JSON object's keys its own way). */
function comparable(r: WorkDetailRow): Record<string, unknown> {
  return {
    attemptLog: r.attemptLog === null ? null : (JSON.parse(r.attemptLog) as unknown),
    state: r.state,
    attempt: r.attempt,
    runAt: r.runAt,
    result: r.result,
    finishedAt: r.finishedAt,
    cancelRequested: r.cancelRequested,
    workerId: r.workerId,
    leaseUntil: r.leaseUntil,
    ocState: r.ocState,
  };
}

const HARNESSES = (SKIP_POSTGRES ? [sqliteHarness] : [sqliteHarness, postgresHarness]) as StoreHarness<unknown>[];

test.each(HARNESSES.map((h) => [h.name, h] as const))(
  "%s: the one-call complete() and the transaction path leave the same rows for the same outcomes",
  async (_name, harness) => {
    const h = await harness.create();
    live.push(h);
    const driver = h.store[DRIVER];
    expect(driver.complete).toBeTypeOf("function");
    const clock = new ManualClock(T0 + 50);
    const paths = [
      { pool: "one-call", rt: runtime(driver, "one-call", clock), finish: finishInOneCall },
      { pool: "transaction", rt: runtime(driver, "transaction", clock), finish: finishInTransaction },
    ];
    const results: Record<string, unknown>[][] = [];
    const stats = [];
    for (const { pool, rt, finish } of paths) {
      const claimed = await prepare(driver, pool);
      const batch: FinishEntry[] = claimed.map((row, i) => ({ row, outcome: CASES[i]!.outcome, level: 0 }));
      await finish(rt, batch, () => null);
      const after = await Promise.all(claimed.map((r) => driver.readWorkDetail(r.id)));
      results.push(after.map((r) => comparable(r!)));
      stats.push(await driver.readStats(pool));
    }
    for (const [i, c] of CASES.entries()) expect(results[1]![i], c.name).toEqual(results[0]![i]);
    expect(stats[1]).toEqual(stats[0]);
    // And the rule itself, on the one-call path:
    const states = results[0]!.map((r) => `${String(r.state)}:${String(r.result ?? "")}`);
    expect(states).toEqual([
      'finished:{"kind":"success","returnValue":{"n":1}}',
      "pending:",
      'finished:{"kind":"failed","error":"boom"}',
      'finished:{"kind":"failed","error":"stop"}',
      'finished:{"kind":"failed","error":"once"}',
      'finished:{"kind":"canceled"}',
      'finished:{"kind":"canceled"}',
      'finished:{"kind":"canceled"}',
      "running:",
    ]);
    // Each attempt that threw has its record, with what its Error said; a cancel that won names the outcome.
    const logs = results[0]!.map((r) => r.attemptLog as { attempt: number; outcome: string; error: Record<string, string> }[] | null);
    expect(logs[0]).toBeNull();
    expect(logs[1]).toEqual([
      {
        attempt: 1,
        startedAt: T0,
        endedAt: T0 + 50,
        outcome: "retrying",
        error: { message: "boom", name: "TypeError", stack: "TypeError: boom\n    at job" },
      },
    ]);
    expect(logs[2]).toEqual([{ attempt: 1, startedAt: T0, endedAt: T0 + 50, outcome: "failed", error: { message: "boom" } }]);
    expect(logs[7]).toEqual([{ attempt: 1, startedAt: T0, endedAt: T0 + 50, outcome: "canceled", error: { message: "x", name: "Error" } }]);
    expect(logs[8]).toBeNull();
  },
);

test.each(HARNESSES.map((h) => [h.name, h] as const))(
  "%s: a batch holding an older and the current attempt of one work writes only the current one's outcome, on both paths",
  async (_name, harness) => {
    const h = await harness.create();
    live.push(h);
    const driver = h.store[DRIVER];
    const clock = new ManualClock(T0 + 50);
    for (const [pool, finish] of [
      ["one-call", finishInOneCall],
      ["transaction", finishInTransaction],
    ] as const) {
      const rt = runtime(driver, pool, clock);
      await driver.ensurePool(pool, { maxParallelism: 10, logLevel: "REPORT", keyParallelism: null }, {});
      const work = newWork(pool, T0, { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } });
      const id = work.id;
      await driver.insertWork([work]);
      const claim = () => driver.claim(pool, { workerId: "w", clock: () => T0, leaseMs: 1000, limit: 1 });
      const first = (await claim()).claimed[0]!;
      // Its lease lapsed and it was rescued; the same process claimed it again before the first result was written.
      await driver.transaction((ops) => ops.reschedule([{ id, runAt: T0 }]));
      const second = (await claim()).claimed[0]!;
      expect(second.attempt).toBe(first.attempt + 1);
      const batch: FinishEntry[] = [
        { row: first, outcome: { kind: "failed", error: "late", retryable: true }, level: 0 },
        { row: second, outcome: { kind: "success", returnValue: "current" }, level: 0 },
      ];
      await finish(rt, batch, () => null);
      const row = (await driver.readWorkDetail(id))!;
      expect({ state: row.state, attempt: row.attempt, result: row.result, log: row.attemptLog }, pool).toEqual({
        state: "finished",
        attempt: 2,
        result: '{"kind":"success","returnValue":"current"}',
        log: null,
      });
    }
  },
);
