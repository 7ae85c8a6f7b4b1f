// Where the benchmark finds its servers, and the sizes of each mode.
// Override the servers with BENCH_PG_URL and BENCH_REDIS_URL; the defaults are the usual
// local ports. The PostgreSQL database is created if it does not exist.

export const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/workpool_bench";
/** A dedicated Redis database index: the benchmark runs FLUSHDB on it. */
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379/9";

/** Jobs per enqueueBatch call, for every system (workpool accepts up to 10,000). */
export const BATCH_SIZE = 1000;

/** Jobs per call when filling a backlog before a drain (not measured; the largest batch workpool takes). */
export const FILL_BATCH_SIZE = 10_000;

/**
 * Sizes per mode. Each measurement also has a time cap (`…CapS`): a system that has not
 * finished by then is measured over the time it ran and the table marks it (†), so one
 * slow system cannot blow the time budget. The large backlog runs once per system (not
 * per repetition). Quick mode is a smoke run: one repetition, small sizes, no NORMAL row.
 */
export const MODES = {
  full: {
    reps: 3,
    enqueueOne: 5000,
    enqueueOneCapS: 8,
    enqueueOneWarmUpS: 1,
    enqueueBatch: 50_000,
    enqueueBatchCapS: 10,
    drain: 50_000,
    drainCapS: 10,
    latencyJobs: 200,
    latencyIntervalMs: 10,
    backlog: 1_000_000,
    backlogCapS: 20,
    commitRateS: 3,
    cpuDrain: 20_000,
    cpuEnqueueOne: 2000,
    cpuEnqueueBatch: 50_000,
    cpuCapS: 30,
    wfRuns: 2000,
    wfCapS: 60,
    wfSleepers: 10_000,
    wfSleepersCapS: 120,
    wfJournal: 1000,
    wfReplayCapS: 120,
    skipSystems: [],
  },
  quick: {
    reps: 1,
    enqueueOne: 500,
    enqueueOneCapS: 2,
    enqueueOneWarmUpS: 0.2,
    enqueueBatch: 10_000,
    enqueueBatchCapS: 3,
    drain: 10_000,
    drainCapS: 3,
    latencyJobs: 50,
    latencyIntervalMs: 10,
    backlog: 200_000,
    backlogCapS: 4,
    commitRateS: 1,
    cpuDrain: 5000,
    cpuEnqueueOne: 500,
    cpuEnqueueBatch: 10_000,
    cpuCapS: 10,
    wfRuns: 300,
    wfCapS: 20,
    wfSleepers: 2000,
    wfSleepersCapS: 60,
    wfJournal: 200,
    wfReplayCapS: 60,
    skipSystems: ["workpool-sqlite-normal"],
  },
};

/** Concurrency of the drain workloads and of the latency probe. */
export const DRAIN_CONCURRENCIES = [10, 100];
export const LATENCY_CONCURRENCY = 10;
export const BACKLOG_CONCURRENCY = 100;
