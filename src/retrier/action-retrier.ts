/**
 * ActionRetrier: "run this idempotent action until it succeeds", with a status, cancel
 * and an exactly-once onComplete. It is a thin layer over a dedicated {@link Workpool}:
 * every run is one work item enqueued with a retry behaviour derived from the retrier's
 * options, so durability, backoff, cancel, lease rescue of dead workers and retention
 * are the pool's, on whichever store it is given.
 */
import { DRIVER, type Driver, type Store, type WorkRow } from "../driver/driver.js";
import { InvalidArgumentError, UnknownWorkError } from "../errors.js";
import type { WorkpoolEventName, WorkpoolEvents } from "../events.js";
import type { ActionFn, OnCompleteHandle } from "../handlers.js";
import { isWorkId } from "../ids.js";
import type { RunOnceResult } from "../internal/worker.js";
import { MAX_PARALLELISM } from "../options.js";
import { describeValue } from "../checks.js";
import type { JsonArgsCheck, JsonContextCheck, RetryBehavior, RunResult, Status } from "../types.js";
import { Workpool, type ActionEnqueueOptions, type StopOptions } from "../workpool.js";
import { RunNotCompletedError, UnknownRunError } from "./errors.js";
import {
  checkBackoff,
  resolveRetrierOptions,
  retrierRetryBehavior,
  RETRIER_RETENTION_MS,
  RUN_OPTION_KEYS,
  type ActionRetrierOptions,
  type Backoff,
} from "./options.js";
import type {
  RetrierActionFn,
  RetrierActionHandle,
  RetrierOnCompleteFn,
  RetrierOnCompleteHandle,
  RetrierRunResult,
  RunBackoffOptions,
  RunId,
  RunOptions,
  RunStatus,
  ScheduledRunOptions,
} from "./types.js";

/**
 * Runs actions reliably: each run is retried with exponential backoff and jitter until it
 * succeeds, throws a NonRetryableError, or has failed `maxFailures + 1` times. A run whose
 * worker died (its lease expired) counts as a failure and is retried. There is no
 * parallelism limit. Completed runs are deleted 7 days after they complete, or earlier by
 * `cleanup`. See docs/action-retrier.md.
 *
 * ```ts
 * const retrier = new ActionRetrier(sqliteStore({ filename: "app.db" }));
 * const charge = retrier.defineAction("charge", async (ctx, args: { orderId: string }) => …);
 * const runId = await retrier.run(charge, { orderId: "o1" });
 * await retrier.start();
 * ```
 */
export class ActionRetrier<Tx = unknown> {
  /** Name of the underlying pool (default "action-retrier"). */
  readonly name: string;
  /**
   * The pool retry behaviour every run is enqueued with: `maxAttempts = maxFailures + 1`,
   * `initialBackoffMs = initialBackoffMs * base`, same `base` (see options.ts for why).
   */
  readonly retryBehavior: Readonly<RetryBehavior>;
  private readonly pool: Workpool<Tx>;
  /** The retrier's own backoff options, which a run may override. */
  private readonly backoff: Backoff;
  private readonly driver: Driver<Tx>;
  private migrated: Promise<void> | null = null;

  constructor(store: Store<Tx>, options?: ActionRetrierOptions) {
    const o = resolveRetrierOptions(options);
    const given = (options ?? {}) as ActionRetrierOptions;
    // The pool validates the store and the options it owns (logger, clock, random, leaseMs).
    this.pool = new Workpool(store, {
      name: o.name,
      // The retrier has no parallelism limit; the pool's largest value is effectively none.
      maxParallelism: MAX_PARALLELISM,
      retentionMs: RETRIER_RETENTION_MS,
      logLevel: given.logLevel,
      logger: given.logger,
      clock: given.clock,
      random: given.random,
      leaseMs: given.leaseMs,
      telemetry: given.telemetry,
    });
    this.driver = store[DRIVER];
    this.name = o.name;
    this.backoff = { initialBackoffMs: o.initialBackoffMs, base: o.base, maxFailures: o.maxFailures };
    this.retryBehavior = Object.freeze(retrierRetryBehavior(o));
  }

  /**
   * Defines an action. It may run more than once (it is retried after failures and after
   * a lost worker), so it must be idempotent. Throw `NonRetryableError` to fail at once.
   */
  defineAction<A, R>(name: string, handler: RetrierActionFn<A, R> & JsonArgsCheck<A>): RetrierActionHandle<A, Awaited<R>> {
    if (typeof handler !== "function") throw new InvalidArgumentError("defineAction(handler)", "must be a function");
    const run: ActionFn<unknown, R> = (ctx, args) =>
      handler({ runId: ctx.workId, attempt: ctx.attempt, signal: ctx.signal, name: ctx.name }, args as A);
    return this.pool.defineAction(name, run) as RetrierActionHandle<unknown, Awaited<R>> as RetrierActionHandle<A, Awaited<R>>;
  }

  /**
   * Defines an onComplete handler: a mutation run exactly once per completed run, inside a
   * transaction (`ctx.tx`). If it throws, its writes roll back and it is tried again later.
   * On SQLite, make it synchronous: the connection is held while it runs.
   */
  defineOnComplete<C = unknown, R = unknown>(
    name: string,
    handler: RetrierOnCompleteFn<Tx, C, R> & JsonContextCheck<C>,
  ): RetrierOnCompleteHandle<C, R> {
    if (typeof handler !== "function") throw new InvalidArgumentError("defineOnComplete(handler)", "must be a function");
    const handle = this.pool.defineOnComplete<unknown, R>(name, (ctx, { workId, context, result }) =>
      handler({ runId: workId, name: ctx.name, tx: ctx.tx }, { runId: workId, context: context as C, result: toRetrierResult(result) }),
    );
    return handle as unknown as RetrierOnCompleteHandle<C, R>;
  }

  /**
   * Starts a run of `handle` with `args`. Resolves with its id once committed (with `tx`:
   * once written into the caller's transaction). Bad input throws InvalidArgumentError
   * before anything is written; on SQLite with `tx` the write happens before this returns,
   * so it joins the caller's synchronous transaction.
   */
  run<A, R, C = unknown>(handle: RetrierActionHandle<A, R>, args: NoInfer<A>, options?: RunOptions<Tx, C, NoInfer<R>>): Promise<RunId> {
    const o = checkRunOptions(options, "run");
    // The pool checks runAt with runAfter, context without onComplete, and the handles, at run time.
    const enqueueOptions = {
      retry: this.runRetryBehavior(o),
      context: o.context,
      // Same object the pool's defineOnComplete returned; only its static type differs.
      onComplete: o.onComplete as unknown as OnCompleteHandle<unknown, R> | undefined,
      runAt: o.runAt,
      runAfter: o.runAfter,
      logLevel: o.logLevel,
      tx: o.tx,
    } as ActionEnqueueOptions<Tx, unknown, R>;
    return this.pool.enqueueAction(handle, args, enqueueOptions);
  }

  /** Starts a run whose first attempt is not before `runAt` (epoch ms). */
  runAt<A, R, C = unknown>(
    runAt: number,
    handle: RetrierActionHandle<A, R>,
    args: NoInfer<A>,
    options?: ScheduledRunOptions<Tx, C, NoInfer<R>>,
  ): Promise<RunId> {
    const o = checkRunOptions(options, "runAt");
    return this.run(handle, args, { ...o, runAt, runAfter: undefined });
  }

  /** Starts a run whose first attempt is not before `runAfter` ms from now. */
  runAfter<A, R, C = unknown>(
    runAfter: number,
    handle: RetrierActionHandle<A, R>,
    args: NoInfer<A>,
    options?: ScheduledRunOptions<Tx, C, NoInfer<R>>,
  ): Promise<RunId> {
    const o = checkRunOptions(options, "runAfter");
    return this.run(handle, args, { ...o, runAt: undefined, runAfter });
  }

  /**
   * The status of a run: `inProgress` (waiting to start, running, or waiting to retry) or
   * `completed` with its result. A canceled run that is still running shows `inProgress`
   * until its attempt returns. Throws UnknownRunError for a run that does not exist
   * (any more).
   */
  async status<R = unknown>(runId: RunId): Promise<RunStatus<R>> {
    checkRunId(runId);
    let status: Status<R>;
    try {
      status = (await this.pool.status(runId)) as Status<R>;
    } catch (e) {
      if (e instanceof UnknownWorkError) throw new UnknownRunError(runId);
      throw e;
    }
    if (status.state !== "finished") return { type: "inProgress" };
    // Finished without a result: deleted after its retention.
    if (!status.result) throw new UnknownRunError(runId);
    return { type: "completed", result: toRetrierResult(status.result) };
  }

  /**
   * Cancels a run. A run waiting to start or to retry completes as `canceled` at once; a
   * running attempt has its `ctx.signal` aborted, is not retried, and the run completes as
   * `canceled` when the attempt returns. Resolves true if this call canceled the run, false
   * if it had already completed or was already being canceled (decided inside the cancel
   * transaction, so of two concurrent calls only one sees true). Throws UnknownRunError for
   * a run that does not exist.
   */
  async cancel(runId: RunId): Promise<boolean> {
    checkRunId(runId);
    await this.readRun(runId);
    return this.pool.cancel(runId);
  }

  /**
   * Deletes a completed run now instead of 7 days after it completed. Throws
   * RunNotCompletedError if the run is in progress (or completed but its onComplete has
   * not committed yet), UnknownRunError if it does not exist.
   */
  async cleanup(runId: RunId): Promise<void> {
    checkRunId(runId);
    await this.ready();
    // The driver deletes the row only if it is finished and its onComplete is settled, in
    // one statement, so a run can never be deleted while it could still change.
    const deleted = await this.driver.deleteFinishedIds(this.name, [runId]);
    if (deleted.length) return;
    const row = await this.readRun(runId);
    if (row.state !== "finished")
      throw new RunNotCompletedError(runId, "it is still in progress; cancel it or wait until status() says completed");
    throw new RunNotCompletedError(
      runId,
      "it has completed but its onComplete handler has not committed yet (it is retried with backoff); try again later",
    );
  }

  /** Starts this process's worker for the retrier. Resolves once it is running. */
  start(): Promise<void> {
    return this.pool.start();
  }

  /**
   * Stops this process's worker: waits up to `timeoutMs` (default 30000) for running
   * attempts, then aborts the rest and hands them back without counting a failure.
   */
  stop(options?: StopOptions): Promise<void> {
    return this.pool.stop(options);
  }

  /**
   * One deterministic step of the worker, for tests and scripts (no start() needed):
   * writes results, runs maintenance (lost-worker rescue, retention), runs due attempts
   * and waits for them to be recorded.
   */
  runOnce(): Promise<RunOnceResult> {
    return this.pool.runOnce();
  }

  /**
   * Listens to the underlying pool's events (`enqueued`, `started`, `completed`, `report`);
   * their `workId` is the run id. A `completed` event with status `retrying` is a failed
   * attempt that will be retried. Returns an unsubscribe function.
   */
  on<K extends WorkpoolEventName>(event: K, listener: (e: WorkpoolEvents[K]) => void): () => void {
    return this.pool.on(event, listener);
  }

  /** The pool retry behaviour of one run: the retrier's, with the run's own overrides. */
  private runRetryBehavior(o: RunBackoffOptions): RetryBehavior {
    if (o.initialBackoffMs === undefined && o.base === undefined && o.maxFailures === undefined) return { ...this.retryBehavior };
    return retrierRetryBehavior(checkBackoff({ ...this.backoff, ...withoutUndefined(o) }));
  }

  /** The stored row of a run; throws UnknownRunError if it is gone. */
  private async readRun(runId: RunId): Promise<WorkRow> {
    await this.ready();
    const [row] = await this.driver.readWork(this.name, [runId]);
    if (!row) throw new UnknownRunError(runId);
    return row;
  }

  private ready(): Promise<void> {
    if (!this.migrated) {
      this.migrated = this.driver.migrate().catch((e: unknown) => {
        this.migrated = null;
        throw e;
      });
    }
    return this.migrated;
  }
}

/** The backoff overrides given in run options. */
function withoutUndefined(o: RunBackoffOptions): Partial<Backoff> {
  const out: Partial<Backoff> = {};
  if (o.initialBackoffMs !== undefined) out.initialBackoffMs = o.initialBackoffMs;
  if (o.base !== undefined) out.base = o.base;
  if (o.maxFailures !== undefined) out.maxFailures = o.maxFailures;
  return out;
}

/** Converts the pool's result (`kind`) into the retrier's (`type`). */
function toRetrierResult<R>(result: RunResult<R>): RetrierRunResult<R> {
  switch (result.kind) {
    case "success":
      return { type: "success", returnValue: result.returnValue };
    case "failed":
      return result.errorData === undefined
        ? { type: "failed", error: result.error }
        : { type: "failed", error: result.error, errorData: result.errorData };
    case "canceled":
      return { type: "canceled" };
  }
}

function checkRunId(runId: unknown): asserts runId is RunId {
  if (!isWorkId(runId))
    throw new InvalidArgumentError("runId", `is not a run id (26 characters, as returned by run), got ${describeValue(runId)}`);
}

/**
 * Checks the options object of run/runAt/runAfter. runAt and runAfter take the time as
 * their first argument, so they refuse it in options too (which one would win is unclear).
 */
function checkRunOptions<Tx, C, R>(options: RunOptions<Tx, C, R> | undefined, method: "run" | "runAt" | "runAfter"): RunOptions<Tx, C, R> {
  if (options === undefined) return {};
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw new InvalidArgumentError("options", "must be an object");
  const allowed = RUN_OPTION_KEYS.filter((k) => method === "run" || (k !== "runAt" && k !== "runAfter"));
  for (const key in options) {
    if (!Object.prototype.hasOwnProperty.call(options, key)) {
      throw new InvalidArgumentError(
        key,
        "is inherited through the options object's prototype; pass options as the object's own properties",
      );
    }
    if (method !== "run" && (key === "runAt" || key === "runAfter")) {
      throw new InvalidArgumentError(
        key,
        `is not an option of ${method}(); the time is its first argument (use run() with { ${key} } instead)`,
      );
    }
    if (!(allowed as readonly string[]).includes(key))
      throw new InvalidArgumentError(key, `is not an option of ${method}() (allowed: ${allowed.join(", ")})`);
  }
  return options;
}
