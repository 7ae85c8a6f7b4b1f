/**
 * A pool instance's readiness: the store migrated (once per instance; a failed migration
 * is tried again on the next call) and the pool's stored configuration seeded.
 */
import type { PoolRuntime } from "./runtime.js";

/** Migrates the store and seeds the pool's config, once, for the calls that need it. */
export class Readiness<Tx> {
  private readyPromise: Promise<void> | null = null;
  /** Set once readyPromise has resolved. */
  private migrated = false;
  private poolReady: Promise<void> | null = null;

  constructor(private readonly rt: PoolRuntime<Tx>) {}

  /**
   * Runs `fn` once the store is migrated. Once it is, `fn` runs at once: enqueues are the
   * hot path and need not wait an extra promise turn for a migration long done.
   */
  afterReady<T>(fn: () => Promise<T>): Promise<T> {
    return this.migrated ? fn() : this.ready().then(fn);
  }

  /** Migrates the store (once; a failed migration is tried again on the next call). */
  ready(): Promise<void> {
    if (!this.readyPromise) {
      this.readyPromise = this.rt.driver.migrate().then(
        () => {
          this.migrated = true;
        },
        (e: unknown) => {
          this.readyPromise = null;
          throw e;
        },
      );
    }
    return this.readyPromise;
  }

  /**
   * Once per instance: writes the pool's config if the store has none, and applies the
   * options the application set explicitly in the constructor. Later changes come from
   * configure(), in any process, and are not overwritten again by this instance.
   */
  readyPool(): Promise<void> {
    if (!this.poolReady) {
      this.poolReady = (async () => {
        await this.ready();
        const config = await this.rt.driver.ensurePool(
          this.rt.pool,
          {
            maxParallelism: this.rt.options.maxParallelism,
            logLevel: this.rt.options.logLevel,
            keyParallelism: this.rt.options.keyParallelism,
          },
          this.rt.options.explicit,
        );
        const rates = this.rt.options.explicitRates;
        if (rates.rateLimit || rates.keyRateLimit) await this.rt.driver.setRateLimits(this.rt.pool, rates);
        this.rt.logger.level = config.logLevel;
      })().catch((e: unknown) => {
        this.poolReady = null;
        throw e;
      });
    }
    return this.poolReady;
  }
}
