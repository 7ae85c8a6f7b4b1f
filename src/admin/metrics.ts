/**
 * Prometheus metrics of a store, with prom-client: per-pool gauges read from the store at
 * scrape time (so they cover every process), and counters and histograms of the events of
 * the pools this process registered with `observe()`. The registry is the admin's own;
 * an app merges it with its own (`Registry.merge`) or scrapes `admin.metrics()`.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ObservablePool, PoolSummary } from "./types.js";
import { WORKFLOW_METRIC_NAMES, WorkflowMetrics } from "./workflow-metrics.js";

/** Histogram buckets, seconds: from a no-op job to an hour-long one. */
const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/** The metric names, as documented in docs/operations.md. */
export const METRIC_NAMES = {
  pending: "workpool_pending",
  retrying: "workpool_retrying",
  running: "workpool_running",
  oldestPendingAge: "workpool_oldest_pending_age_seconds",
  maxParallelism: "workpool_max_parallelism",
  storeUp: "workpool_store_up",
  enqueued: "workpool_enqueued_total",
  started: "workpool_started_total",
  finished: "workpool_finished_total",
  retries: "workpool_retries_total",
  attemptDuration: "workpool_attempt_duration_seconds",
  startDelay: "workpool_start_delay_seconds",
  ...WORKFLOW_METRIC_NAMES,
} as const;

/** The admin's registry and the metrics in it. */
export class AdminMetrics {
  readonly registry = new Registry();
  /** The store read in flight: every gauge collected in one scrape shares it. */
  private reading: Promise<PoolSummary[] | null> | null = null;
  private readonly enqueued: Counter<"pool" | "handler">;
  private readonly started: Counter<"pool" | "handler">;
  private readonly finished: Counter<"pool" | "handler" | "kind">;
  private readonly retries: Counter<"pool" | "handler">;
  private readonly attemptDuration: Histogram<"pool">;
  private readonly startDelay: Histogram<"pool">;
  private readonly workflows: WorkflowMetrics;

  /** `readPools` reads every pool from the store; `onError` hears a failed read. */
  constructor(
    private readonly readPools: () => Promise<PoolSummary[]>,
    private readonly onError: (e: unknown) => void,
  ) {
    const registers = [this.registry];
    this.poolGauge(METRIC_NAMES.pending, "Pending work never attempted (due or scheduled)", (p) => p.counts.pending);
    this.poolGauge(METRIC_NAMES.retrying, "Pending work waiting out a retry backoff", (p) => p.counts.retrying);
    this.poolGauge(METRIC_NAMES.running, "Attempts running, across every process", (p) => p.counts.running);
    this.poolGauge(METRIC_NAMES.oldestPendingAge, "Age of the oldest due pending work (0 when none is due)", (p) =>
      p.oldestPendingAgeMs === null ? 0 : p.oldestPendingAgeMs / 1000,
    );
    this.poolGauge(METRIC_NAMES.maxParallelism, "The pool's stored maxParallelism (0 while paused)", (p) => p.maxParallelism);
    const read = (): Promise<PoolSummary[] | null> => this.read();
    new Gauge({
      name: METRIC_NAMES.storeUp,
      help: "1 if the last scrape read the store, 0 if the read failed",
      registers,
      async collect() {
        this.set((await read()) === null ? 0 : 1);
      },
    });
    this.enqueued = new Counter({ name: METRIC_NAMES.enqueued, help: "Work enqueued", labelNames: ["pool", "handler"], registers });
    this.started = new Counter({ name: METRIC_NAMES.started, help: "Attempts started", labelNames: ["pool", "handler"], registers });
    this.finished = new Counter({
      name: METRIC_NAMES.finished,
      help: "Work finished, by how it ended (success, failed, canceled)",
      labelNames: ["pool", "handler", "kind"],
      registers,
    });
    this.retries = new Counter({
      name: METRIC_NAMES.retries,
      help: "Attempts that failed and will be retried",
      labelNames: ["pool", "handler"],
      registers,
    });
    this.attemptDuration = new Histogram({
      name: METRIC_NAMES.attemptDuration,
      help: "How long attempts ran, seconds",
      labelNames: ["pool"],
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.startDelay = new Histogram({
      name: METRIC_NAMES.startDelay,
      help: "From when work was due (its enqueue, for work due at once) to its attempt's start, seconds",
      labelNames: ["pool"],
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.workflows = new WorkflowMetrics(this.registry);
  }

  /** A gauge with one value per pool, set from the store read of the scrape. */
  private poolGauge(name: string, help: string, value: (p: PoolSummary) => number): void {
    const read = (): Promise<PoolSummary[] | null> => this.read();
    new Gauge({
      name,
      help,
      labelNames: ["pool"],
      registers: [this.registry],
      async collect() {
        const pools = await read();
        // Pools deleted since the last scrape disappear; a failed read shows none.
        this.reset();
        for (const p of pools ?? []) this.set({ pool: p.name }, value(p));
      },
    });
  }

  /** The pools, read once per scrape; null when the read failed (reported to onError). */
  private read(): Promise<PoolSummary[] | null> {
    this.reading ??= this.readPools()
      .catch((e: unknown) => {
        this.onError(e);
        return null;
      })
      .finally(() => {
        this.reading = null;
      });
    return this.reading;
  }

  /** Counts `pool`'s events until the returned function is called. */
  observe(pool: ObservablePool): () => void {
    const offs = [
      pool.on("enqueued", (e) => this.enqueued.inc({ pool: e.pool, handler: e.fnName })),
      pool.on("started", (e) => {
        this.started.inc({ pool: e.pool, handler: e.fnName });
        this.startDelay.observe({ pool: e.pool }, Math.max(0, e.startLagMs) / 1000);
      }),
      pool.on("completed", (e) => {
        if (e.status === "retrying") this.retries.inc({ pool: e.pool, handler: e.fnName });
        else this.finished.inc({ pool: e.pool, handler: e.fnName, kind: e.status });
        if (e.durationMs !== undefined) this.attemptDuration.observe({ pool: e.pool }, Math.max(0, e.durationMs) / 1000);
      }),
      ...this.workflows.observe(pool),
    ];
    return () => {
      for (const off of offs) off();
    };
  }
}
