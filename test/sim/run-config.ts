/**
 * The shape of one run, drawn from its seed: how many processes, how often store calls
 * fail, how many steps, the options every process of the pool shares (its limits,
 * retention, intervals, rate limits) and the keys its work may carry.
 */
import type { RateLimit } from "../../src/types.js";
import type { ProcessConfig } from "./process.js";
import type { Rng } from "./rng.js";
import type { StoreKind } from "./stores.js";

/** What a run is made of, before its first step. */
export interface RunShape {
  /** Processes alive at once, at most. */
  slots: number;
  /** Fraction of store calls given a fault. */
  faultRate: number;
  /** Steps of the random phase. */
  steps: number;
  config: ProcessConfig;
  /** The keys work of the run may carry; empty when none carries one. */
  keys: string[];
  /** Whether the run uses rate limits (from the start, or set by configure() later). */
  rated: boolean;
}

/**
 * Draws a run's shape from `rng`; its rate limits come from `rates`, a stream of their
 * own, so a run without them is the run its seed made before they were generated.
 */
export function drawRun(
  rng: Rng,
  rates: Rng,
  o: { pool: string; store: StoreKind; faults: boolean; steps?: number; rates?: boolean },
): RunShape {
  const slots = rng.int(1, 4);
  const faultRate = o.faults ? rng.pick([0, 0.04, 0.1, 0.2]) : 0;
  const steps = o.steps ?? rng.int(20, 70);
  const config: ProcessConfig = {
    pool: o.pool,
    maxParallelism: rng.int(1, 4),
    leaseMs: 1000,
    retentionMs: rng.pick([0, 1500, 60_000]),
    pollIntervalMs: o.store === "sqlite" ? rng.pick([200, 1000]) : rng.pick([500, 2000]),
    maintenanceIntervalMs: rng.pick([200, 500]),
    ...(rng.chance(0.3) ? { concurrency: rng.int(1, 2) } : {}),
    ...(rng.chance(0.5) ? { keyParallelism: rng.int(1, 3) } : {}),
  };
  const keys = rng.chance(0.75) ? Array.from({ length: rng.int(1, 4) }, (_, i) => `k${i + 1}`) : [];
  const rated = (o.rates ?? true) && rates.chance(0.35);
  if (rated && rates.chance(0.6)) config.rateLimit = drawRate(rates);
  if (rated && keys.length && rates.chance(0.6)) config.keyRateLimit = drawRate(rates);
  return { slots, faultRate, steps, config, keys, rated };
}

/** A small rate limit: 1-5 starts per a few hundred ms to a few seconds. */
export function drawRate(rng: Rng): RateLimit {
  return { limit: rng.int(1, 5), periodMs: rng.pick([200, 500, 1000, 2000, 3000]) };
}

const rate = (r: RateLimit): string => `${r.limit}/${r.periodMs} ms`;

/** The first line of a run's trace. */
export function describeRun(seed: number, r: RunShape): string {
  const c = r.config;
  return (
    `seed ${seed}: ${r.slots} process(es), maxParallelism ${c.maxParallelism}, retention ${c.retentionMs} ms, fault rate ${r.faultRate}` +
    (c.concurrency ? `, concurrency ${c.concurrency}` : "") +
    (c.keyParallelism ? `, keyParallelism ${c.keyParallelism}` : "") +
    (c.rateLimit ? `, rateLimit ${rate(c.rateLimit)}` : "") +
    (c.keyRateLimit ? `, keyRateLimit ${rate(c.keyRateLimit)}` : "") +
    (r.rated ? ", rate limits may change" : "") +
    (r.keys.length ? `, keys ${r.keys.join(" ")}` : "")
  );
}
