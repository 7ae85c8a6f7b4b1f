/**
 * Bad input that the API refuses before it reaches the store: pool options, handler
 * definitions, enqueue's promise, telemetry options. The store never matters to these,
 * so they run once, on one SQLite store; the checks that read the store back (nothing
 * written, the configuration unchanged) run on every store in the conformance suite.
 */
import { describe, expect, test } from "vitest";
import { InvalidArgumentError, ManualClock, Workpool, type Store, type Telemetry, type WorkpoolOptions } from "../../src/index.js";
import { openTelemetry } from "../../src/integrations/opentelemetry.js";
import { CapturingLogger, T0 } from "../helpers/common.js";
import { useTestStores } from "../helpers/stores.js";

const openTestStore = useTestStores();

/** A fresh store and pools on it, set up as the conformance suite's are. */
async function ctx(): Promise<{ h: { store: Store<unknown> }; pool(options?: WorkpoolOptions): Workpool<unknown> }> {
  const store = (await openTestStore("sqlite")).store as unknown as Store<unknown>;
  const clock = new ManualClock(T0);
  const logger = new CapturingLogger();
  return {
    h: { store },
    pool: (options) => new Workpool(store, { clock, logger, random: () => 0.5, logLevel: "DEBUG", ...options }),
  };
}

describe("bad input", () => {
  test("pool options out of range are rejected with the option's name", async () => {
    const t = await ctx();
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ maxParallelism: -1 }, /maxParallelism: must be an integer from 0 to 10000, got -1/],
      [{ maxParallelism: 10_001 }, /maxParallelism: must be an integer from 0 to 10000/],
      [{ maxParallelism: 2.5 }, /maxParallelism/],
      [{ maxParallelism: "10" }, /maxParallelism: .* got "10"/],
      [{ logLevel: "VERBOSE" }, /logLevel: must be one of DEBUG, TRACE, INFO, REPORT, WARN, ERROR/],
      [
        { defaultRetryBehavior: { maxAttempts: 0, initialBackoffMs: 1, base: 2 } },
        /defaultRetryBehavior.maxAttempts: must be an integer from 1/,
      ],
      [
        { defaultRetryBehavior: { maxAttempts: 1, initialBackoffMs: -1, base: 2 } },
        /defaultRetryBehavior.initialBackoffMs: must be a finite number >= 0/,
      ],
      [
        { defaultRetryBehavior: { maxAttempts: 1, initialBackoffMs: 1, base: 0.5 } },
        /defaultRetryBehavior.base: must be a finite number >= 1/,
      ],
      [{ leaseMs: 0 }, /leaseMs: must be an integer from 100/],
      [{ name: "" }, /name: must be 1 to 100 characters/],
      [{ name: "a b" }, /name:/],
      [{ retentionMs: -5 }, /retentionMs/],
      [{ actionTimeoutMs: Infinity }, /actionTimeoutMs/],
      [{ logger: {} }, /logger: must have debug, info, warn and error/],
    ];
    for (const [options, message] of bad) {
      expect(() => new Workpool(t.h.store, options as never), JSON.stringify(options)).toThrow(message);
    }
    expect(() => new Workpool({} as never)).toThrow(/store: must be a store/);
  });

  test("a handler name defined twice is rejected", async () => {
    const t = await ctx();
    const pool = t.pool();
    pool.defineAction("send", () => 1);
    expect(() => pool.defineAction("send", () => 2)).toThrow(/"send" is already defined \(as a action\)|"send" is already defined/);
    expect(() => pool.defineMutation("send", () => 2)).toThrow(InvalidArgumentError);
    expect(() => pool.defineOnComplete("", () => undefined)).toThrow(/defineOnComplete\(name\)/);
    expect(() => pool.defineAction("x", "not a function" as never)).toThrow(/must be a function/);
  });

  test("without tx, bad input rejects the returned promise rather than throwing", async () => {
    const t = await ctx();
    const pool = t.pool();
    const a = pool.defineAction("a", (_c, _args: unknown) => 1);
    let promise: Promise<unknown> | undefined;
    expect(() => {
      promise = pool.enqueueAction(a, { f: () => 1 });
    }).not.toThrow();
    await expect(promise).rejects.toThrow(/args.f: a function is not JSON/);
    await expect(pool.enqueueActionBatch(a, "x" as never)).rejects.toThrow(/argsArray: must be an array/);
  });

  test("bad telemetry options are refused naming the option", async () => {
    const t = await ctx();
    const cases: [() => unknown, string][] = [
      [() => t.pool({ telemetry: {} as Telemetry }), "telemetry"],
      [() => t.pool({ telemetry: openTelemetry as unknown as Telemetry }), "telemetry"],
      [() => openTelemetry({ tracerProvider: {} as never }), "tracerProvider"],
      [() => openTelemetry({ attemptsJoinTrace: "yes" as never }), "attemptsJoinTrace"],
      [() => openTelemetry({ sampler: 1 } as never), "sampler"],
    ];
    for (const [make, field] of cases) {
      let error: unknown;
      try {
        make();
      } catch (e) {
        error = e;
      }
      expect(error, field).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).field).toBe(field);
    }
  });
});
