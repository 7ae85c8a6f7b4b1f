/**
 * Shared set-up for conformance tests: a fresh store, a ManualClock, a captured logger,
 * and small helpers to await events instead of sleeping.
 */
import { afterEach } from "vitest";
import { DRIVER, type Driver } from "../../src/driver/driver.js";
import { ManualClock, Workpool, type WorkpoolOptions } from "../../src/index.js";
import { CapturingLogger, T0 } from "../helpers/common.js";
import type { HarnessStore, StoreHarness } from "./harness.js";

export { aborted, CapturingLogger, deferred, nextEvent, T0 } from "../helpers/common.js";

/** Everything one test works with. */
export interface TestContext<Tx> {
  h: HarnessStore<Tx>;
  clock: ManualClock;
  logger: CapturingLogger;
  driver: Driver<Tx>;
  /** A pool on this test's store; extra pools share the store and (by default) the clock. */
  pool(options?: WorkpoolOptions): Workpool<Tx>;
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
      pool(options?: WorkpoolOptions) {
        // Jitter fixed at 1.0 (random 0.5) so backoff times are exact.
        const p = new Workpool(h.store, { clock, logger, random: () => 0.5, logLevel: "DEBUG", ...options });
        entry.pools.push(p);
        return p;
      },
    };
  };
}

