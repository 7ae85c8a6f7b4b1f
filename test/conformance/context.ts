/**
 * Shared set-up for conformance tests: a fresh store, a ManualClock, a captured logger,
 * and small helpers to await events instead of sleeping.
 */
import { afterEach } from "vitest";
import { DRIVER, type Driver } from "../../src/driver/driver.js";
import { ManualClock, Workpool, type Logger, type WorkpoolEventName, type WorkpoolEvents, type WorkpoolOptions } from "../../src/index.js";
import type { HarnessStore, StoreHarness } from "./harness.js";

/** A logger that keeps every line, for assertions on what was logged. */
export class CapturingLogger implements Logger {
  readonly lines: { level: string; text: string }[] = [];
  private push(level: string, args: unknown[]): void {
    this.lines.push({ level, text: args.map((a) => (a instanceof Error ? a.message : String(a))).join(" ") });
  }
  debug(...args: unknown[]): void {
    this.push("debug", args);
  }
  info(...args: unknown[]): void {
    this.push("info", args);
  }
  warn(...args: unknown[]): void {
    this.push("warn", args);
  }
  error(...args: unknown[]): void {
    this.push("error", args);
  }
  /** Lines containing `text`. */
  matching(text: string): string[] {
    return this.lines.filter((l) => l.text.includes(text)).map((l) => l.text);
  }
}

/** Everything one test works with. */
export interface TestContext<Tx> {
  h: HarnessStore<Tx>;
  clock: ManualClock;
  logger: CapturingLogger;
  driver: Driver<Tx>;
  /** A pool on this test's store; extra pools share the store and (by default) the clock. */
  pool(options?: WorkpoolOptions): Workpool<Tx>;
}

/** Fixed start time: far from the epoch and from now, so no test depends on the real date. */
export const T0 = Date.UTC(2030, 0, 1);

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

/** Resolves with the next `name` event of `pool` that matches `filter`. */
export function nextEvent<Tx, K extends WorkpoolEventName>(
  pool: Workpool<Tx>,
  name: K,
  filter: (e: WorkpoolEvents[K]) => boolean = () => true,
): Promise<WorkpoolEvents[K]> {
  return new Promise((resolve) => {
    const off = pool.on(name, (e) => {
      if (filter(e)) {
        off();
        resolve(e);
      }
    });
  });
}

/** A promise with its resolve function, for actions the test releases by hand. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Resolves when `signal` aborts. */
export function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener("abort", () => resolve(signal.reason), { once: true });
  });
}
