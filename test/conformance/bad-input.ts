/**
 * Every class of bad input the public API can receive, on every store: each is refused
 * with an InvalidArgumentError naming the field at fault, and nothing is written or
 * changed (no work row, the pool's stored configuration as it was).
 */
import { describe, expect, test } from "vitest";
import { InvalidArgumentError, ManualClock, Workpool, type WorkpoolOptions } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { T0, useTestContext, type TestContext } from "./context.js";

/** One class of bad input: the call that must be refused and the field it must name. */
export interface BadCase {
  name: string;
  field: string;
  call: () => unknown;
}

/** Runs `call`, which must throw or reject with an InvalidArgumentError naming `field`. */
export async function expectRefused(c: BadCase): Promise<void> {
  let error: unknown;
  try {
    await c.call();
  } catch (e) {
    error = e;
  }
  expect(error, c.name).toBeInstanceOf(InvalidArgumentError);
  expect((error as InvalidArgumentError).field, `${c.name}: ${(error as Error).message}`).toBe(c.field);
  expect((error as Error).message, c.name).toContain(`workpool: ${c.field}: `);
}

/** Options whose `key` is inherited through the prototype rather than set on the object. */
function inherited<T extends object>(key: string, value: unknown, own: T = {} as T): T {
  return Object.assign(Object.create({ [key]: value }) as object, own) as T;
}

function poolCases<Tx>(t: TestContext<Tx>): BadCase[] {
  const make = (options: unknown) => () => new Workpool(t.h.store, options as WorkpoolOptions);
  const nanClock = new ManualClock(T0);
  return [
    { name: "options not an object", field: "options", call: make("fast") },
    { name: "unknown pool option (misspelt)", field: "maxParalellism", call: make({ maxParalellism: 3 }) },
    { name: "pool option inherited through the prototype", field: "maxParallelism", call: make(inherited("maxParallelism", 3)) },
    { name: "maxParallelism below 0", field: "maxParallelism", call: make({ maxParallelism: -1 }) },
    { name: "maxParallelism not an integer", field: "maxParallelism", call: make({ maxParallelism: 2.5 }) },
    { name: "maxParallelism a string", field: "maxParallelism", call: make({ maxParallelism: "10" }) },
    { name: "unknown log level", field: "logLevel", call: make({ logLevel: "VERBOSE" }) },
    {
      name: "retry behaviour with maxAttempts 0",
      field: "defaultRetryBehavior.maxAttempts",
      call: make({ defaultRetryBehavior: { maxAttempts: 0, initialBackoffMs: 1, base: 2 } }),
    },
    {
      name: "unknown key in a retry behaviour",
      field: "defaultRetryBehavior.maxAttempt",
      call: make({ defaultRetryBehavior: { maxAttempt: 3, initialBackoffMs: 1, base: 2 } }),
    },
    {
      name: "negative backoff",
      field: "defaultRetryBehavior.initialBackoffMs",
      call: make({ defaultRetryBehavior: { maxAttempts: 2, initialBackoffMs: -1, base: 2 } }),
    },
    { name: "leaseMs out of range", field: "leaseMs", call: make({ leaseMs: 0 }) },
    { name: "pool name with a space", field: "name", call: make({ name: "a b" }) },
    { name: "retentionMs negative", field: "retentionMs", call: make({ retentionMs: -5 }) },
    { name: "actionTimeoutMs infinite", field: "actionTimeoutMs", call: make({ actionTimeoutMs: Infinity }) },
    { name: "logger without methods", field: "logger", call: make({ logger: {} }) },
    { name: "clock without methods", field: "clock", call: make({ clock: { now: () => 1 } }) },
    { name: "random not a function", field: "random", call: make({ random: 0.5 }) },
    { name: "concurrency 0", field: "concurrency", call: make({ concurrency: 0 }) },
    { name: "not a store", field: "store", call: () => new Workpool({} as never) },
    {
      name: "a clock that returns NaN, at enqueue",
      field: "clock",
      call: () => {
        const pool = new Workpool(t.h.store, {
          name: "nan-clock",
          clock: { now: () => NaN, setTimeout: nanClock.setTimeout.bind(nanClock), clearTimeout: nanClock.clearTimeout.bind(nanClock) },
        });
        return pool.enqueueAction(
          pool.defineAction("a", () => 1),
          {},
        );
      },
    },
  ];
}

function enqueueCases<Tx>(t: TestContext<Tx>, pool: Workpool<Tx>): BadCase[] {
  const a = pool.defineAction("a", (_c, _args: unknown) => 1);
  const m = pool.defineMutation("m", (_c, _args: unknown) => 1);
  const oc = pool.defineOnComplete("oc", () => undefined);
  const other = t.pool({ name: "other" }).defineAction("a", () => 1);
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  const named = Object.assign([1, 2], { extra: true });
  return [
    // @ts-expect-error runAt and runAfter are exclusive in the types too
    { name: "runAt and runAfter together", field: "runAt", call: () => pool.enqueueAction(a, {}, { runAt: 1, runAfter: 1 }) },
    { name: "runAt not finite", field: "runAt", call: () => pool.enqueueAction(a, {}, { runAt: NaN }) },
    { name: "runAfter not finite", field: "runAfter", call: () => pool.enqueueAction(a, {}, { runAfter: Infinity }) },
    {
      name: "retry with maxAttempts 0",
      field: "retry.maxAttempts",
      call: () => pool.enqueueAction(a, {}, { retry: { maxAttempts: 0, initialBackoffMs: 1, base: 2 } }),
    },
    {
      name: "retry with base below 1",
      field: "retry.base",
      call: () => pool.enqueueAction(a, {}, { retry: { maxAttempts: 2, initialBackoffMs: 1, base: 0 } }),
    },
    {
      name: "unknown key in retry",
      field: "retry.maxAttempt",
      call: () => pool.enqueueAction(a, {}, { retry: { maxAttempt: 2, initialBackoffMs: 1, base: 2 } as never }),
    },
    { name: "retry not a boolean or behaviour", field: "retry", call: () => pool.enqueueAction(a, {}, { retry: "yes" as never }) },
    { name: "retry on a mutation", field: "retry", call: () => pool.enqueueMutation(m, {}, { retry: true } as never) },
    { name: "timeoutMs on a mutation", field: "timeoutMs", call: () => pool.enqueueMutation(m, {}, { timeoutMs: 5 } as never) },
    { name: "unknown enqueue option", field: "bogus", call: () => pool.enqueueAction(a, {}, { bogus: 1 } as never) },
    {
      name: "enqueue option inherited through the prototype",
      field: "runAfter",
      call: () => pool.enqueueAction(a, {}, inherited("runAfter", 5)),
    },
    { name: "enqueue options not an object", field: "options", call: () => pool.enqueueAction(a, {}, 5 as never) },
    { name: "args a function", field: "args", call: () => pool.enqueueAction(a, () => 1) },
    { name: "args with a BigInt", field: "args.n", call: () => pool.enqueueAction(a, { n: 10n }) },
    { name: "args with a cycle", field: "args.self", call: () => pool.enqueueAction(a, cycle) },
    { name: "args undefined", field: "args", call: () => pool.enqueueAction(a, undefined) },
    { name: "args with a Date", field: "args.when", call: () => pool.enqueueAction(a, { when: new Date() }) },
    { name: "args with NaN", field: "args.n", call: () => pool.enqueueAction(a, { n: NaN }) },
    { name: "args with -0", field: "args.n", call: () => pool.enqueueAction(a, { n: -0 }) },
    { name: "args with an array that has a named property", field: "args.list", call: () => pool.enqueueAction(a, { list: named }) },
    { name: "args with undefined in an array", field: "args[1]", call: () => pool.enqueueAction(a, [1, undefined]) },
    { name: "args over the size limit", field: "args", call: () => pool.enqueueAction(a, { big: "x".repeat(1024 * 1024 + 1) }) },
    {
      name: "context that is not JSON",
      field: "context.f",
      call: () => pool.enqueueAction(a, {}, { onComplete: oc, context: { f: () => 1 } }),
    },
    // @ts-expect-error context needs onComplete in the types too
    { name: "context without onComplete", field: "context", call: () => pool.enqueueAction(a, {}, { context: { a: 1 } }) },
    { name: "a handle of another pool", field: "handle", call: () => pool.enqueueAction(other, {}) },
    { name: "a handle of the wrong kind", field: "handle", call: () => pool.enqueueAction(m as never, {}) },
    { name: "onComplete not an onComplete handle", field: "onComplete", call: () => pool.enqueueAction(a, {}, { onComplete: a as never }) },
    { name: "timeoutMs 0", field: "timeoutMs", call: () => pool.enqueueAction(a, {}, { timeoutMs: 0 }) },
    { name: "empty display name", field: "name", call: () => pool.enqueueAction(a, {}, { name: "" }) },
    { name: "argsArray not an array", field: "argsArray", call: () => pool.enqueueActionBatch(a, "abc" as never) },
    { name: "argsArray with a bad item", field: "argsArray[1].x", call: () => pool.enqueueActionBatch(a, [1, { x: () => 2 }]) },
    { name: "argsArray over 10,000 items", field: "argsArray", call: () => pool.enqueueActionBatch(a, new Array(10_001).fill(1)) },
  ];
}

function callCases<Tx>(pool: Workpool<Tx>): BadCase[] {
  return [
    // @ts-expect-error a plain string is not a WorkId in the types too
    { name: "status of a malformed id", field: "id", call: () => pool.status("01ABC") },
    { name: "statusBatch of a non-array", field: "ids", call: () => pool.statusBatch("x" as never) },
    { name: "cancel of a number", field: "id", call: () => pool.cancel(42 as never) },
    { name: "cancelAll with a misspelt option", field: "befor", call: () => pool.cancelAll({ befor: T0 } as never) },
    { name: "cancelAll with a string", field: "options", call: () => pool.cancelAll("all" as never) },
    { name: "cancelAll before NaN", field: "before", call: () => pool.cancelAll({ before: NaN }) },
    { name: "stop with a misspelt option", field: "timeout", call: () => pool.stop({ timeout: 0 } as never) },
    { name: "stop with a negative timeout", field: "timeoutMs", call: () => pool.stop({ timeoutMs: -1 }) },
    { name: "configure of a start-time option", field: "leaseMs", call: () => pool.configure({ leaseMs: 5 } as never) },
    { name: "configure with an inherited option", field: "maxParallelism", call: () => pool.configure(inherited("maxParallelism", 0)) },
    { name: "configure maxParallelism not an integer", field: "maxParallelism", call: () => pool.configure({ maxParallelism: 1.5 }) },
    { name: "a listener that is not a function", field: "listener", call: () => pool.on("completed", 42 as never) },
    { name: "an unknown event", field: "event", call: () => pool.on("finished" as never, () => undefined) },
    { name: "a handler defined twice", field: "defineAction(name)", call: () => pool.defineAction("a", () => 2) },
    {
      name: "a handler that is not a function",
      field: "defineAction(handler)",
      call: () => pool.defineAction("x", "not a function" as never),
    },
  ];
}

function storeCases<Tx>(harness: StoreHarness<Tx>, t: TestContext<Tx>): BadCase[] {
  const make = (extra: Record<string, unknown>) => () => harness.createStoreWith(t.h, extra);
  return [
    { name: "unknown store option", field: "pollInterval", call: make({ pollInterval: 5 }) },
    { name: "store option out of range", field: "pollIntervalMs", call: make({ pollIntervalMs: 0 }) },
    {
      name: "store option inherited through the prototype",
      field: "pollIntervalMs",
      call: () => harness.createStoreWith(t.h, { pollIntervalMs: 5 }, true),
    },
  ];
}

export function defineBadInputTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("bad input is refused, naming the field, and writes nothing", () => {
    const ctx = useTestContext(harness);

    test("every class of bad input", async () => {
      const t = await ctx();
      const pool = t.pool({ maxParallelism: 7 });
      await pool.configure({ maxParallelism: 7 });
      const cases = [...poolCases(t), ...enqueueCases(t, pool), ...callCases(pool), ...storeCases(harness, t)];
      for (const c of cases) await expectRefused(c);
      expect(cases.length).toBeGreaterThanOrEqual(70);
      expect(await harness.countWorkRows(t.h)).toBe(0);
      expect((await t.driver.readPoolConfig(pool.name))?.maxParallelism).toBe(7);
    });

    test("a `tx` that is not a connection in an open transaction on the store's database", async () => {
      const t = await ctx();
      const pool = t.pool();
      const a = pool.defineAction("a", () => 1);
      const wrong = await harness.wrongTxValues(t.h);
      try {
        for (const { label, tx } of wrong) {
          await expectRefused({ name: label, field: "tx", call: () => pool.enqueueAction(a, {}, { tx: tx as Tx }) });
          await expectRefused({ name: `${label} (batch)`, field: "tx", call: () => pool.enqueueActionBatch(a, [1, 2], { tx: tx as Tx }) });
        }
      } finally {
        for (const w of wrong) await w.done();
      }
      expect(await harness.countWorkRows(t.h)).toBe(0);
    });
  });
}
