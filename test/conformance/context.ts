/**
 * Shared set-up for conformance tests: a fresh store, a ManualClock, a captured logger,
 * and small helpers to await events instead of sleeping.
 */
import { afterEach } from "vitest";
import { DRIVER, type Driver } from "../../src/driver/driver.js";
import { ManualClock, Workpool, type Store, type WorkpoolOptions } from "../../src/index.js";
import { CapturingLogger, T0 } from "../helpers/common.js";
import type { HarnessStore, StoreHarness } from "./harness.js";

export { aborted, CapturingLogger, deferred, nextEvent, seededRandom, T0 } from "../helpers/common.js";

/** Everything one test works with. */
export interface TestContext<Tx> {
  h: HarnessStore<Tx>;
  clock: ManualClock;
  logger: CapturingLogger;
  driver: Driver<Tx>;
  /**
   * A pool on this test's store (or on `store`, e.g. one from withDriver); extra pools
   * share the store and (by default) the clock.
   */
  pool(options?: WorkpoolOptions, store?: Store<Tx>): Workpool<Tx>;
}

/** Registers per-test set-up and tear-down; call `ctx()` inside a test. */
export function useTestContext<Tx>(harness: StoreHarness<Tx>): () => Promise<TestContext<Tx>> {
  const live: { h: HarnessStore<Tx>; pools: Workpool<Tx>[] }[] = [];
  afterEach(async () => {
    for (const l of live.splice(0)) {
      for (const p of l.pools) await p.stop({ timeoutMs: 0 }).catch(() => undefined);
      await l.h.dispose();
    }
  });
  return async () => {
    const h = await harness.create();
    const entry = { h, pools: [] as Workpool<Tx>[] };
    live.push(entry);
    const clock = new ManualClock(T0);
    const logger = new CapturingLogger();
    return {
      h,
      clock,
      logger,
      driver: h.store[DRIVER],
      pool(options?: WorkpoolOptions, store: Store<Tx> = h.store) {
        // Jitter fixed at 1.0 (random 0.5) so backoff times are exact.
        const p = new Workpool(store, { clock, logger, random: () => 0.5, logLevel: "DEBUG", ...options });
        entry.pools.push(p);
        return p;
      },
    };
  };
}

/** Replacements for driver methods; each gets the real driver first, then the call's arguments. */
export type DriverOverrides<Tx> = {
  [K in keyof Driver<Tx>]?: NonNullable<Driver<Tx>[K]> extends (...args: infer A) => infer R ? (real: Driver<Tx>, ...args: A) => R : never;
};

/** The same store with some driver methods replaced: fault injection around the real driver. */
export function withDriver<Tx>(store: Store<Tx>, overrides: DriverOverrides<Tx>): Store<Tx> {
  const real = store[DRIVER];
  const driver = new Proxy(real, {
    get(target, key, receiver) {
      const override = (overrides as Record<PropertyKey, ((real: Driver<Tx>, ...args: unknown[]) => unknown) | undefined>)[key];
      if (override) return (...args: unknown[]) => override(real, ...args);
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return Object.create(store, { [DRIVER]: { value: driver } }) as Store<Tx>;
}
