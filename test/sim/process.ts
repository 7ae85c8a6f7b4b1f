/**
 * One simulated worker process: a Workpool instance on the faulty driver, with its own
 * view of the clock. Killing it drops everything in its memory at once (kill -9): its
 * queued store calls never run, its timers never fire, its attempts never settle.
 */
import type { Clock } from "../../src/clock.js";
import { DRIVER, type Store } from "../../src/driver/driver.js";
import { Workpool } from "../../src/index.js";
import type { RateLimit } from "../../src/types.js";
import { faultyDriver, type OpHost, type ProcHandle } from "./faulty-driver.js";
import type { SimStore } from "./stores.js";
import type { SimWorkflows } from "./wf-workload.js";
import { defineWorkload, type WorkloadHooks } from "./workload.js";

/** Options every process of a run shares. */
export interface ProcessConfig {
  pool: string;
  maxParallelism: number;
  leaseMs: number;
  retentionMs: number;
  pollIntervalMs: number;
  maintenanceIntervalMs: number;
  /** Local cap of this process, or undefined for none. */
  concurrency?: number;
  /** The pool's per-key limit, or undefined for none. */
  keyParallelism?: number;
  /** The pool's rate limit on starts, or undefined for none. */
  rateLimit?: RateLimit;
  /** The per-key rate limit on starts, or undefined for none. */
  keyRateLimit?: RateLimit;
}

/** A simulated process. */
export class SimProcess implements ProcHandle {
  dead = false;
  /** Whether start() was called and no stop() since. */
  started = false;
  /** Frozen until this time (a long GC pause, a stalled VM): none of its calls or attempts move. */
  pausedUntil = 0;
  /** Its heartbeats are held back until this time (a slow connection): its leases may lapse while it works. */
  heartbeatsHeldUntil = 0;
  /** Timers of no delay it set since its last store call: a worker that keeps doing so busy-polls. */
  zeroTimers = 0;
  /** A start/stop/runOnce in flight: no other is issued meanwhile. */
  busy = false;
  readonly pool: Workpool<unknown>;
  readonly handlers: ReturnType<typeof defineWorkload>;
  /** Its WorkflowManager and workflows, in a run that has workflows. */
  readonly wf: SimWorkflows | null;

  constructor(
    readonly label: string,
    /** Steps its loop by runOnce() instead of start(). */
    readonly stepped: boolean,
    sim: SimStore,
    host: OpHost,
    clockView: (proc: SimProcess) => Clock,
    random: () => number,
    config: ProcessConfig,
    hooks: WorkloadHooks,
    /** Receives the pool's warnings and errors (the trace keeps the telling ones). */
    log: (proc: SimProcess, level: "warn" | "error", message: string) => void,
    /** Defines the run's workflows on the pool, in a run that has them. */
    workflows?: (pool: Workpool<unknown>, handlers: ReturnType<typeof defineWorkload>) => SimWorkflows,
  ) {
    const driver = faultyDriver(sim.driver, this, host);
    const store: Store<unknown> = { dialect: sim.kind, migrate: () => Promise.resolve(), close: () => Promise.resolve(), [DRIVER]: driver };
    this.pool = new Workpool(store, {
      name: config.pool,
      maxParallelism: config.maxParallelism,
      leaseMs: config.leaseMs,
      retentionMs: config.retentionMs,
      pollIntervalMs: config.pollIntervalMs,
      maintenanceIntervalMs: config.maintenanceIntervalMs,
      reportIntervalMs: 3_600_000,
      defaultRetryBehavior: { maxAttempts: 3, initialBackoffMs: 100, base: 2 },
      clock: clockView(this),
      random,
      logger: {
        debug: () => undefined,
        info: () => undefined,
        warn: (_fields: unknown, m: string) => log(this, "warn", m),
        error: (_fields: unknown, m: string) => log(this, "error", m),
      },
      logLevel: "WARN",
      ...(config.concurrency === undefined ? {} : { concurrency: config.concurrency }),
      ...(config.keyParallelism === undefined ? {} : { keyParallelism: config.keyParallelism }),
      ...(config.rateLimit === undefined ? {} : { rateLimit: config.rateLimit }),
      ...(config.keyRateLimit === undefined ? {} : { keyRateLimit: config.keyRateLimit }),
    });
    this.handlers = defineWorkload(this.pool, label, hooks);
    this.wf = workflows ? workflows(this.pool, this.handlers) : null;
  }
}
