/**
 * Workpool: the public class. Holds options and handlers, writes new work, answers
 * status, cancels, and owns this process's worker for the pool.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { DRIVER, type Driver, type Store } from "./driver/driver.js";
import type { RateLimits } from "./driver/pool-ops.js";
import { InvalidArgumentError, UnknownWorkError } from "./errors.js";
import { EVENT_NAMES, EventHub, PoolLogger, type WorkpoolEventName, type WorkpoolEvents } from "./events.js";
import {
  HandlerRegistry,
  type ActionFn,
  type ActionHandle,
  type MutationFn,
  type MutationHandle,
  type OnCompleteFn,
  type OnCompleteHandle,
} from "./handlers.js";
import { workIdTime } from "./ids.js";
import type { BatchActionFn, BatchActionOptions } from "./internal/batch-types.js";
import { checkBatchOptions } from "./internal/batch-options.js";
import { Enqueuer } from "./internal/enqueuer.js";
import { POOL_RUNTIME, type PoolInternals, type PoolRuntime } from "./internal/runtime.js";
import { Readiness } from "./internal/readiness.js";
import { checkIds, toStatus } from "./internal/status.js";
import { cancelWork } from "./internal/transitions/cancel.js";
import { Worker, type RunOnceResult } from "./internal/worker.js";
import { Tracing } from "./internal/tracing.js";
import { checkConfigure, resolveOptions, type ConfigureOptions, type ResolvedOptions, type WorkpoolOptions } from "./options.js";
import { checkInt, checkOptionKeys, describeValue, optionKeys } from "./checks.js";
import type { JsonArgsCheck, JsonContextCheck, Status, WorkId } from "./types.js";
import {
  checkScheduleId,
  prepareSchedule,
  toScheduleInfo,
  type CronSpec,
  type ScheduleInfo,
  type ScheduleOptions,
} from "./cron/schedules.js";
import type { ActionEnqueueOptions, CancelAllOptions, EnqueueOptions, StopOptions } from "./call-options.js";

export type {
  ActionEnqueueOptions,
  ActionOnlyOptions,
  CancelAllOptions,
  EnqueueCommonOptions,
  EnqueueCompletion,
  EnqueueOptions,
  EnqueueTiming,
  StopOptions,
} from "./call-options.js";

const CANCEL_BATCH = 500;
const CANCEL_ALL_KEYS = optionKeys<CancelAllOptions>()({ before: true });
const STOP_KEYS = optionKeys<StopOptions>()({ timeoutMs: true });

/** A durable pool of actions and mutations with a global parallelism limit. See README. */
export class Workpool<Tx = unknown, P extends string = string> {
  /** The pool's name. */
  readonly name: P;
  private readonly opts: ResolvedOptions;
  private readonly driver: Driver<Tx>;
  private readonly logger: PoolLogger;
  private readonly events: EventHub;
  private readonly handlers: HandlerRegistry<Tx>;
  private readonly rt: PoolRuntime<Tx>;
  private readonly worker: Worker<Tx>;
  private readonly readiness: Readiness<Tx>;
  private readonly enqueuer: Enqueuer<Tx>;

  constructor(store: Store<Tx>, options?: WorkpoolOptions<P>) {
    const driver = (store as Partial<Store<Tx>> | null)?.[DRIVER];
    if (!driver) throw new InvalidArgumentError("store", "must be a store from sqliteStore() or postgresStore()");
    this.opts = resolveOptions(options);
    this.name = this.opts.name as P;
    this.driver = driver;
    this.logger = new PoolLogger(this.opts.logger, this.opts.logLevel, this.opts.name);
    this.events = new EventHub(this.logger);
    // A store whose transactions run on its one synchronous connection (SQLite) holds it while a handler awaits.
    this.handlers = new HandlerRegistry<Tx>(this.name, driver.synchronousTx);
    this.rt = {
      pool: this.name,
      driver,
      options: this.opts,
      logger: this.logger,
      events: this.events,
      handlers: this.handlers,
      tracing: new Tracing(this.opts.telemetry),
      workerId: `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`,
    };
    this.worker = new Worker(this.rt);
    this.readiness = new Readiness(this.rt);
    this.enqueuer = new Enqueuer(this.rt, this.worker, this.readiness);
  }

  /** Defines an action: any async function; side effects allowed; retried if enqueued with retry. */
  defineAction<A, R>(name: string, handler: ActionFn<A, R> & JsonArgsCheck<A>): ActionHandle<A, Awaited<R>, P> {
    return this.handlers.define("action", name, handler);
  }

  /**
   * Defines a batch action: enqueued like an action (one work per args, each with its own
   * retries, status, onComplete and cancel), run by one call of `handler` for up to
   * `maxBatchSize` claimed works, waiting at most `maxWaitMs` to fill a batch. It returns
   * one result per item, in order; an Error in place of a result fails that item alone.
   */
  defineBatchAction<A, R>(
    name: string,
    handler: BatchActionFn<A, R> & JsonArgsCheck<A>,
    options?: BatchActionOptions,
  ): ActionHandle<A, Exclude<R, Error>, P> {
    const limits = checkBatchOptions(options);
    return this.handlers.define("batchAction", name, handler, false, limits);
  }

  /**
   * Defines a mutation: runs inside the transaction that records its result, with
   * `ctx.tx`. On SQLite, make it synchronous: the connection is held while it runs.
   */
  defineMutation<A, R>(name: string, handler: MutationFn<Tx, A, R> & JsonArgsCheck<A>): MutationHandle<A, Awaited<R>, P> {
    return this.handlers.define("mutation", name, handler);
  }

  /** Defines an onComplete handler: a mutation run exactly once per finished work. */
  defineOnComplete<C = unknown, R = unknown>(
    name: string,
    handler: OnCompleteFn<Tx, C, R> & JsonContextCheck<C>,
  ): OnCompleteHandle<C, R, P> {
    return this.handlers.define("onComplete", name, handler);
  }

  /** Enqueues an action. Resolves with its id once committed (or written into `tx`). */
  enqueueAction<A, R, C = unknown>(
    handle: ActionHandle<A, R, P>,
    args: NoInfer<A>,
    options?: ActionEnqueueOptions<Tx, C, NoInfer<R>, P>,
  ): Promise<WorkId> {
    return this.enqueuer.enqueue({ kind: "action", handle, argsList: [args], options, argsField: "args" }).then((ids) => ids[0]!);
  }

  /** Enqueues a mutation. Resolves with its id once committed (or written into `tx`). */
  enqueueMutation<A, R, C = unknown>(
    handle: MutationHandle<A, R, P>,
    args: NoInfer<A>,
    options?: EnqueueOptions<Tx, C, NoInfer<R>, P>,
  ): Promise<WorkId> {
    return this.enqueuer.enqueue({ kind: "mutation", handle, argsList: [args], options, argsField: "args" }).then((ids) => ids[0]!);
  }

  /** Enqueues one action per element of `argsArray`, in one transaction. */
  enqueueActionBatch<A, R, C = unknown>(
    handle: ActionHandle<A, R, P>,
    argsArray: readonly NoInfer<A>[],
    options?: ActionEnqueueOptions<Tx, C, NoInfer<R>, P>,
  ): Promise<WorkId[]> {
    return this.enqueuer.enqueue({ kind: "action", handle, argsList: argsArray, options, argsField: "argsArray" });
  }

  /** Enqueues one mutation per element of `argsArray`, in one transaction. */
  enqueueMutationBatch<A, R, C = unknown>(
    handle: MutationHandle<A, R, P>,
    argsArray: readonly NoInfer<A>[],
    options?: EnqueueOptions<Tx, C, NoInfer<R>, P>,
  ): Promise<WorkId[]> {
    return this.enqueuer.enqueue({ kind: "mutation", handle, argsList: argsArray, options, argsField: "argsArray" });
  }

  /**
   * Creates or updates the durable schedule `scheduleId`: at every tick of `spec` the store
   * enqueues `handle(args)` with `options`, exactly once whatever the number of processes.
   * Resolves once committed. Re-scheduling with the same cron and time zone keeps the next tick.
   */
  async schedule<A, R, C = unknown>(
    scheduleId: string,
    spec: CronSpec,
    handle: ActionHandle<A, R, P> | MutationHandle<A, R, P>,
    args: NoInfer<A>,
    options?: ScheduleOptions<C, NoInfer<R>, P>,
  ): Promise<void> {
    const ctx = { pool: this.name, options: this.opts, handlers: this.handlers, logger: this.logger };
    const write = prepareSchedule(ctx, scheduleId, spec, handle, args, options);
    await this.readiness.ready();
    await this.driver.upsertSchedule(this.name, write);
    this.worker.scheduler.wake();
  }

  /** Deletes a schedule (work already enqueued by it stays). Resolves true if it existed. */
  async unschedule(scheduleId: string): Promise<boolean> {
    const id = checkScheduleId(scheduleId);
    await this.readiness.ready();
    return this.driver.deleteSchedule(this.name, id);
  }

  /** The pool's schedules, by id: spec, next tick, last tick enqueued and its work. */
  async schedules(): Promise<ScheduleInfo[]> {
    await this.readiness.ready();
    return (await this.driver.listSchedules(this.name)).map(toScheduleInfo);
  }

  /** The status of one work id. Throws for malformed ids and for ids this pool never had. */
  async status(id: WorkId): Promise<Status> {
    return (await this.statusBatch([id], "id"))[0]!;
  }

  /** Statuses of many ids, in the same order. */
  async statusBatch(ids: readonly WorkId[], field = "ids"): Promise<Status[]> {
    const list = checkIds(field, ids);
    await this.readiness.ready();
    const read = await this.driver.readWorkWithProgress(this.name, list);
    const rows = new Map(read.map((r) => [r.row.id, r.row]));
    const progress = new Map(read.flatMap((r) => (r.progress === null ? [] : [[r.row.id, r.progress] as const])));
    const now = this.opts.clock.now();
    return list.map((id) => {
      const row = rows.get(id);
      if (row) return toStatus(row, progress.get(id));
      // Retention deletes a row only after it finished retentionMs ago, and it finished
      // after it was created (the id's time); a younger id that is missing never existed.
      if (workIdTime(id) > now - this.opts.retentionMs) throw new UnknownWorkError(id);
      return { state: "finished" } as Status;
    });
  }

  /**
   * Cancels work. Pending work (also work waiting to retry) finishes `canceled` at once;
   * running work has its signal aborted and finishes `canceled`, never retried. Finished
   * or unknown work is left as it is. Resolves true if this call canceled the work (or
   * asked its running attempt to stop), false if it was finished or already being canceled.
   */
  async cancel(id: WorkId): Promise<boolean> {
    return (await this.cancelIds(checkIds("id", [id]))) > 0;
  }

  /** Cancels all unfinished work enqueued before `before` (default: now). Returns how many. */
  async cancelAll(options?: CancelAllOptions): Promise<number> {
    const before = options === undefined ? undefined : checkOptionKeys("options", options, CANCEL_ALL_KEYS, "cancelAll()").before;
    if (before !== undefined && (typeof before !== "number" || !Number.isFinite(before))) {
      throw new InvalidArgumentError("before", `must be a finite epoch time in ms, got ${describeValue(before)}`);
    }
    await this.readiness.ready();
    // +1: "before the call" includes work enqueued in the same millisecond.
    const cutoff = before ?? this.opts.clock.now() + 1;
    let total = 0;
    for (;;) {
      const ids = await this.driver.listCancelable(this.name, cutoff, CANCEL_BATCH);
      if (!ids.length) return total;
      total += await this.cancelIds(ids);
    }
  }

  private async cancelIds(ids: string[]): Promise<number> {
    await this.readiness.ready();
    const { events, running } = await cancelWork(this.rt, ids);
    for (const e of events) this.events.emit(e);
    this.worker.abortCanceled(running);
    return events.length + running.length;
  }

  /**
   * Changes the pool's configuration in the store; every worker process of the pool
   * obeys it from its next claim.
   */
  async configure(options: ConfigureOptions): Promise<void> {
    const { rateLimit, keyRateLimit, ...patch } = checkConfigure(options);
    await this.readiness.readyPool();
    const config = await this.driver.ensurePool(
      this.name,
      { maxParallelism: this.opts.maxParallelism, logLevel: this.opts.logLevel, keyParallelism: this.opts.keyParallelism },
      patch,
    );
    if (rateLimit !== undefined || keyRateLimit !== undefined) {
      const rates: Partial<RateLimits> = {};
      if (rateLimit !== undefined) rates.rateLimit = rateLimit;
      if (keyRateLimit !== undefined) rates.keyRateLimit = keyRateLimit;
      await this.driver.setRateLimits(this.name, rates);
    }
    this.logger.level = config.logLevel;
    this.worker.wake();
  }

  /** Starts a worker for this pool in this process. Resolves once it is running. */
  async start(): Promise<void> {
    await this.readiness.readyPool();
    this.worker.start();
  }

  /**
   * Stops this process's worker: stops claiming, waits up to `timeoutMs` for running
   * attempts, then aborts what is left and hands it back without counting a failed attempt.
   */
  async stop(options?: StopOptions): Promise<void> {
    const given = options === undefined ? undefined : checkOptionKeys("options", options, STOP_KEYS, "stop()").timeoutMs;
    const timeoutMs = given === undefined ? 30_000 : checkInt("timeoutMs", given, 0, 24 * 3600 * 1000);
    await this.worker.stop(timeoutMs);
  }

  /**
   * One deterministic step of the worker, for tests and scripts (no start() needed):
   * writes queued results, runs maintenance, claims due work and waits for those attempts
   * to finish and be recorded.
   */
  async runOnce(): Promise<RunOnceResult> {
    await this.readiness.readyPool();
    return this.worker.runOnce();
  }

  /** @internal The pool's runtime and readiness, for the layers built on it (workflows). */
  get [POOL_RUNTIME](): PoolInternals<Tx> {
    return { rt: this.rt, ready: () => this.readiness.readyPool() };
  }

  /** Number of attempts this process is running for the pool. */
  get running(): number {
    return this.worker.running;
  }

  /** Listens to an event (`enqueued`, `started`, `completed`, `report`, and the `workflow*` events of a WorkflowManager). Returns an unsubscribe function. */
  on<K extends WorkpoolEventName>(event: K, listener: (e: WorkpoolEvents[K]) => void): () => void {
    if (!EVENT_NAMES.includes(event)) {
      throw new InvalidArgumentError("event", `must be one of ${EVENT_NAMES.join(", ")}, got ${describeValue(event)}`);
    }
    if (typeof listener !== "function") throw new InvalidArgumentError("listener", `must be a function, got ${describeValue(listener)}`);
    return this.events.on(event, listener);
  }

  /** Removes a listener added with on(). */
  off<K extends WorkpoolEventName>(event: K, listener: (e: WorkpoolEvents[K]) => void): void {
    this.events.off(event, listener);
  }
}
