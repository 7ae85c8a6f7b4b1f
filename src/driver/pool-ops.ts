/**
 * The part of the driver interface about a pool as a whole: its stored configuration and
 * limits (parallelism, pause, rate limits), its counters and counts, and its maintenance
 * leadership. Internal like the rest of the interface; every time is a parameter.
 */
import type { RateLimit } from "../types.js";
import type { PoolConfig, PoolCounts, PoolStats } from "./work-rows.js";

/** The stored rate limits of a pool (null: none). */
export interface RateLimits {
  rateLimit: RateLimit | null;
  keyRateLimit: RateLimit | null;
}

/** A change to a pool's stored limit: pause (0, remembering the limit), resume it, or set one. */
export type PoolLimitChange = { pause: true } | { resume: true } | { maxParallelism: number };

/** The operations on pools every driver implements. */
export interface PoolOps {
  /** Acquires or renews the pool's maintenance leadership until `now + ttlMs`; true if held. */
  acquireLeadership(pool: string, workerId: string, now: number, ttlMs: number): Promise<boolean>;
  /** Pauses (remembering the limit), resumes or sets the stored limit and wakes the pool's workers; a pause of a paused pool or a resume of a running one changes nothing. */
  changePoolLimit(pool: string, change: PoolLimitChange): Promise<void>;
  /** Due pending work a rate limit holds back at `now`: all of it while the pool's window is full, else the due work of keys whose window is full. */
  countRateLimited(pool: string, now: number): Promise<number>;
  /** Pending, running and backlog counts of the pool at `now`. */
  counts(pool: string, now: number): Promise<PoolCounts>;
  /** Returns the stored config, seeding it with `seed` first and applying `overrides`; a raised or removed keyParallelism gives back the work the claim set aside for its key's limit. */
  ensurePool(pool: string, seed: PoolConfig, overrides: Partial<PoolConfig>): Promise<PoolConfig>;
  /** Reads the pool's stored config (null if the pool was never used). */
  readPoolConfig(pool: string): Promise<PoolConfig | null>;
  /** The pool's stored rate limits. */
  readRateLimits(pool: string): Promise<RateLimits>;
  /** Cumulative report counters of the pool. */
  readStats(pool: string): Promise<PoolStats>;
  /** Gives up leadership if held by `workerId`. */
  releaseLeadership(pool: string, workerId: string): Promise<void>;
  /** Sets the pool's rate limits (undefined: unchanged; null: removed) and wakes its workers; the pool's row must exist. */
  setRateLimits(pool: string, limits: Partial<RateLimits>): Promise<void>;
}
