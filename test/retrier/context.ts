/**
 * Set-up shared by the ActionRetrier suite's topics: a fresh store per test, a
 * ManualClock, fixed jitter and a capturing logger; everything is disposed after the test.
 */
import { afterEach } from "vitest";
import { DRIVER } from "../../src/driver/driver.js";
import { ActionRetrier, ManualClock, type ActionRetrierOptions } from "../../src/index.js";
import { CapturingLogger, T0, type RetrierStoreFactory, type RetrierTestStore } from "./helpers.js";

/** A day in ms. */
export const DAY = 24 * 3600 * 1000;

/** Everything one test works with. */
export interface RetrierContext<Tx> {
  s: RetrierTestStore<Tx>;
  clock: ManualClock;
  logger: CapturingLogger;
  /** A retrier on this test's store: ManualClock, jitter factor 1.0 (random 0.5), DEBUG logs. */
  retrier(options?: ActionRetrierOptions): ActionRetrier<Tx>;
  /** Pending + running work of the default retrier pool. */
  unfinished(): Promise<number>;
}

/** Registers per-test tear-down; call the returned `ctx()` inside a test. */
export function useRetrierContext<Tx>(factory: RetrierStoreFactory<Tx>): () => Promise<RetrierContext<Tx>> {
  const live: { s: RetrierTestStore<Tx>; retriers: ActionRetrier<Tx>[] }[] = [];
  afterEach(async () => {
    for (const l of live.splice(0)) {
      for (const r of l.retriers) await r.stop({ timeoutMs: 0 }).catch(() => undefined);
      await l.s.dispose();
    }
  });
  return async function ctx(): Promise<RetrierContext<Tx>> {
    const s = await factory.create();
    const entry = { s, retriers: [] as ActionRetrier<Tx>[] };
    live.push(entry);
    const clock = new ManualClock(T0);
    const logger = new CapturingLogger();
    return {
      s,
      clock,
      logger,
      retrier(options) {
        const r = new ActionRetrier(s.store, { clock, logger, random: () => 0.5, logLevel: "DEBUG", ...options });
        entry.retriers.push(r);
        return r;
      },
      async unfinished() {
        const c = await s.store[DRIVER].counts("action-retrier", clock.now());
        return c.pending + c.running;
      },
    };
  };
}
