/**
 * Workpool: the public class. Holds options and handlers, writes new work, answers
 * status, cancels, and owns this process's worker for the pool.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { DRIVER, type Driver, type NewWork, type Store, type WorkRow } from "./driver/driver.js";
import type { TransactionExecutor } from "./driver/tx-executor.js";
import { InvalidArgumentError, UnknownWorkError } from "./errors.js";
import { EventHub, PoolLogger, type WorkpoolEventName, type WorkpoolEvents } from "./events.js";
import {
  HandlerRegistry,
  type ActionFn,
  type ActionHandle,
  type MutationFn,
  type MutationHandle,
  type OnCompleteFn,
  type OnCompleteHandle,
} from "./handlers.js";
import { isWorkId, newWorkId, workIdTime } from "./ids.js";
import { encodeJson, encodeOptionalJson } from "./json.js";
import { applyTransitions, cancelPending, type Transition } from "./internal/transitions.js";
import type { PoolRuntime } from "./internal/runtime.js";
import { resolveRunAt } from "./internal/schedule.js";
import { Worker, type RunOnceResult } from "./internal/worker.js";
import {
  checkConfigure,
  checkInt,
  checkName,
  checkOptionKeys,
  checkRetryBehavior,
  describeValue,
  resolveOptions,
  type ConfigureOptions,
  type ResolvedOptions,
  type WorkpoolOptions,
} from "./options.js";
import type { RetryBehavior, RunResult, Status, WorkId } from "./types.js";

/** Options shared by enqueueAction and enqueueMutation. */
export interface EnqueueOptions<Tx, C = unknown, R = unknown> {
  /** Earliest start, epoch ms. Not with runAfter. */
  runAt?: number;
  /** Earliest start, ms from now. Not with runAt. */
  runAfter?: number;
  /** Mutation run exactly once when the work finishes. */
  onComplete?: OnCompleteHandle<C, R>;
  /** JSON passed to onComplete as `context`. */
  context?: C;
  /** Display name for logs, events and `ctx.name` (default: the handler's name). */
  name?: string;
  /**
   * The caller's open transaction: the work exists if and only if it commits. The store's
   * own handle (`Tx`), or an ORM's transaction wrapped by an adapter (`workpool/drizzle`,
   * `workpool/kysely`, `workpool/knex`, `workpool/prisma`, or {@link transactionExecutor}).
   */
  tx?: Tx | TransactionExecutor;
}

/** Options of enqueueAction. */
export interface ActionEnqueueOptions<Tx, C = unknown, R = unknown> extends EnqueueOptions<Tx, C, R> {
  /** true: the pool's default retry behaviour; false: no retry; or a behaviour. Default: `retryActionsByDefault`. */
  retry?: boolean | RetryBehavior;
  /** Abort and fail an attempt after this many ms (overrides `actionTimeoutMs`). */
  timeoutMs?: number;
}

/** Options of stop(). */
export interface StopOptions {
  /** How long to wait for running attempts before aborting and handing them back, ms. Default 30000. */
  timeoutMs?: number;
}

/** Options of cancelAll(). */
export interface CancelAllOptions {
  /** Cancel only work enqueued before this time (epoch ms). Default: now. */
  before?: number;
}

const MAX_BATCH = 10_000;
const CANCEL_BATCH = 500;

/** A durable pool of actions and mutations with a global parallelism limit. See README. */
export class Workpool<Tx = unknown> {
  /** The pool's name. */
  readonly name: string;
  private readonly opts: ResolvedOptions;
  private readonly driver: Driver<Tx>;
  private readonly logger: PoolLogger;
  private readonly events: EventHub;
  private readonly handlers: HandlerRegistry<Tx>;
  private readonly rt: PoolRuntime<Tx>;
  private readonly worker: Worker<Tx>;
  private readyPromise: Promise<void> | null = null;
  /** Set once readyPromise has resolved. */
  private migrated = false;
  private poolReady: Promise<void> | null = null;

  constructor(store: Store<Tx>, options?: WorkpoolOptions) {
    const driver = (store as Partial<Store<Tx>> | null)?.[DRIVER];
    if (!driver) throw new InvalidArgumentError("store", "must be a store from sqliteStore() or postgresStore()");
    this.opts = resolveOptions(options);
    this.name = this.opts.name;
    this.driver = driver;
    this.logger = new PoolLogger(this.opts.logger, this.opts.logLevel);
    this.events = new EventHub(this.logger);
    this.handlers = new HandlerRegistry<Tx>(this.name);
    this.rt = {
      pool: this.name,
      driver,
      options: this.opts,
      logger: this.logger,
      events: this.events,
      handlers: this.handlers,
      workerId: `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`,
    };
    this.worker = new Worker(this.rt);
  }

  /** Defines an action: any async function; side effects allowed; retried if enqueued with retry. */
  defineAction<A, R>(name: string, handler: ActionFn<A, R>): ActionHandle<A, Awaited<R>> {
    return this.handlers.define("action", name, handler);
  }

  /**
   * Defines a mutation: runs inside the transaction that records its result, with
   * `ctx.tx`. On SQLite, make it synchronous: the connection is held while it runs.
   */
  defineMutation<A, R>(name: string, handler: MutationFn<Tx, A, R>): MutationHandle<A, Awaited<R>> {
    return this.handlers.define("mutation", name, handler);
  }

  /** Defines an onComplete handler: a mutation run exactly once per finished work. */
  defineOnComplete<C = unknown, R = unknown>(name: string, handler: OnCompleteFn<Tx, C, R>): OnCompleteHandle<C, R> {
    return this.handlers.define("onComplete", name, handler);
  }

  /** Enqueues an action. Resolves with its id once committed (or written into `tx`). */
  enqueueAction<A, R, C = unknown>(handle: ActionHandle<A, R>, args: A, options?: ActionEnqueueOptions<Tx, C, R>): Promise<WorkId> {
    return this.enqueue("action", handle, () => [args], options, "args").then((ids) => ids[0]!);
  }

  /** Enqueues a mutation. Resolves with its id once committed (or written into `tx`). */
  enqueueMutation<A, R, C = unknown>(handle: MutationHandle<A, R>, args: A, options?: EnqueueOptions<Tx, C, R>): Promise<WorkId> {
    return this.enqueue("mutation", handle, () => [args], options, "args").then((ids) => ids[0]!);
  }

  /** Enqueues one action per element of `argsArray`, in one transaction. */
  enqueueActionBatch<A, R, C = unknown>(
    handle: ActionHandle<A, R>,
    argsArray: readonly A[],
    options?: ActionEnqueueOptions<Tx, C, R>,
  ): Promise<WorkId[]> {
    return this.enqueue("action", handle, () => checkBatch(argsArray), options, "argsArray");
  }

  /** Enqueues one mutation per element of `argsArray`, in one transaction. */
  enqueueMutationBatch<A, R, C = unknown>(
    handle: MutationHandle<A, R>,
    argsArray: readonly A[],
    options?: EnqueueOptions<Tx, C, R>,
  ): Promise<WorkId[]> {
    return this.enqueue("mutation", handle, () => checkBatch(argsArray), options, "argsArray");
  }

  /**
   * Validates, then writes. Bad input rejects the returned promise, except with `tx` on a
   * synchronous store (SQLite): there it throws, so the caller's synchronous
   * `db.transaction()` rolls back instead of committing without the work.
   */
  private enqueue(
    kind: "action" | "mutation",
    handle: unknown,
    argsList: () => readonly unknown[],
    options: unknown,
    argsField: string,
  ): Promise<WorkId[]> {
    const throwsSync =
      this.driver.synchronousTx && typeof options === "object" && options !== null && (options as { tx?: unknown }).tx !== undefined;
    try {
      return this.insert(this.prepare(kind, handle, argsList(), options, argsField));
    } catch (e) {
      if (throwsSync) throw e;
      return Promise.reject(e);
    }
  }

  /** Validates everything and builds the rows; throws before anything is written. */
  private prepare(
    kind: "action" | "mutation",
    handle: unknown,
    argsList: readonly unknown[],
    options: unknown,
    argsField: string,
  ): { rows: NewWork[]; tx: Tx | TransactionExecutor | undefined } {
    const fnName = this.handlers.checkHandle("handle", handle, kind);
    if (kind === "mutation" && typeof options === "object" && options !== null) {
      for (const key of ["retry", "timeoutMs"]) {
        if (Object.prototype.hasOwnProperty.call(options, key)) {
          throw new InvalidArgumentError(
            key,
            "is not an option of enqueueMutation (mutations run once in a transaction and are not retried or timed out)",
          );
        }
      }
    }
    const what = kind === "action" ? "enqueueAction" : "enqueueMutation";
    const o = (
      options === undefined ? {} : checkOptionKeys("options", options, kind === "action" ? ACTION_OPTIONS : MUTATION_OPTIONS, what)
    ) as ActionEnqueueOptions<Tx>;
    const now = this.opts.clock.now();
    const runAt = resolveRunAt(o, now, this.logger);
    const retry = kind === "action" ? this.resolveRetry(o.retry) : null;
    const timeoutMs = o.timeoutMs === undefined ? null : checkInt("timeoutMs", o.timeoutMs, 1, 7 * 24 * 3600 * 1000);
    const onComplete = o.onComplete === undefined ? null : this.handlers.checkHandle("onComplete", o.onComplete, "onComplete");
    if (o.context !== undefined && onComplete === null)
      throw new InvalidArgumentError("context", "is only delivered to onComplete; give onComplete too");
    const context = encodeOptionalJson("context", o.context);
    const name = o.name === undefined ? null : checkName("name", o.name, 200);
    const rows = argsList.map((args, i) => ({
      id: newWorkId(now),
      pool: this.name,
      kind,
      fnName,
      name,
      args: encodeJson(argsField === "args" ? "args" : `argsArray[${i}]`, args),
      runAt,
      enqueuedAt: now,
      retry,
      timeoutMs,
      onComplete,
      context,
    }));
    return { rows, tx: o.tx };
  }

  private resolveRetry(retry: unknown): RetryBehavior | null {
    if (retry === undefined) return this.opts.retryActionsByDefault ? { ...this.opts.defaultRetryBehavior } : null;
    if (retry === true) return { ...this.opts.defaultRetryBehavior };
    if (retry === false) return null;
    if (typeof retry === "object" && retry !== null) return checkRetryBehavior("retry", retry);
    throw new InvalidArgumentError("retry", `must be a boolean or { maxAttempts, initialBackoffMs, base }, got ${describeValue(retry)}`);
  }

  /**
   * Writes the rows. With `tx` on a synchronous store (SQLite) the write happens before
   * this returns, so it joins the caller's synchronous transaction.
   */
  private insert({ rows, tx }: { rows: NewWork[]; tx: Tx | TransactionExecutor | undefined }): Promise<WorkId[]> {
    const emit = (): WorkId[] => {
      // Built only when someone will see them: a batch enqueue makes one per row.
      if (this.events.wants("enqueued")) {
        for (const r of rows) {
          this.events.emit({
            event: "enqueued",
            pool: this.name,
            workId: r.id,
            fnName: r.fnName,
            kind: r.kind,
            runAt: r.runAt,
            enqueuedAt: r.enqueuedAt,
          });
        }
      }
      return rows.map((r) => r.id);
    };
    if (rows.length === 0) return Promise.resolve([]);
    if (tx !== undefined && this.driver.synchronousTx) {
      if (tx === null || typeof tx !== "object")
        throw new InvalidArgumentError("tx", "must be the store's transaction handle (a better-sqlite3 Database for SQLite)");
      return this.driver.insertWork(rows, tx).then(emit);
    }
    const claim =
      tx === undefined && rows.length === 1 && this.driver.insertAndClaim ? this.worker.enqueueClaimOptions(rows[0]!.runAt) : null;
    if (claim) {
      // This process runs a worker with room: the work may start without a second commit.
      return this.worker.trackEnqueueClaim(
        this.afterReady(() => this.driver.insertAndClaim!(rows[0]!, claim)).then(async (claimed) => {
          const ids = emit();
          if (claimed) await this.worker.adopt(claimed, claim.now);
          return ids;
        }),
      );
    }
    return this.afterReady(() => this.driver.insertWork(rows, tx)).then(emit);
  }

  /**
   * Runs `fn` once the store is migrated. Once it is, `fn` runs at once: enqueues are the
   * hot path and need not wait an extra promise turn for a migration long done.
   */
  private afterReady<T>(fn: () => Promise<T>): Promise<T> {
    return this.migrated ? fn() : this.ready().then(fn);
  }

  /** Migrates the store (once; a failed migration is tried again on the next call). */
  private ready(): Promise<void> {
    if (!this.readyPromise) {
      this.readyPromise = this.driver.migrate().then(
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
  private readyPool(): Promise<void> {
    if (!this.poolReady) {
      this.poolReady = (async () => {
        await this.ready();
        const config = await this.driver.ensurePool(
          this.name,
          { maxParallelism: this.opts.maxParallelism, logLevel: this.opts.logLevel },
          this.opts.explicit,
        );
        this.logger.level = config.logLevel;
      })().catch((e: unknown) => {
        this.poolReady = null;
        throw e;
      });
    }
    return this.poolReady;
  }

  /** The status of one work id. Throws for malformed ids and for ids this pool never had. */
  async status(id: WorkId): Promise<Status> {
    return (await this.statusBatch([id], "id"))[0]!;
  }

  /** Statuses of many ids, in the same order. */
  async statusBatch(ids: readonly WorkId[], field = "ids"): Promise<Status[]> {
    const list = checkIds(field, ids);
    await this.ready();
    const rows = new Map((await this.driver.readWork(this.name, list)).map((r) => [r.id, r]));
    const now = this.opts.clock.now();
    return list.map((id) => {
      const row = rows.get(id);
      if (row) return toStatus(row);
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
    const before = options === undefined ? undefined : checkOptionKeys("options", options, ["before"], "cancelAll()").before;
    if (before !== undefined && (typeof before !== "number" || !Number.isFinite(before))) {
      throw new InvalidArgumentError("before", `must be a finite epoch time in ms, got ${describeValue(before)}`);
    }
    await this.ready();
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
    await this.ready();
    const rt = this.rt;
    const runningIds: string[] = [];
    const events = await this.driver.transaction(async (ops) => {
      const now = this.opts.clock.now();
      const rows = await ops.lockWork(this.name, ids);
      const transitions: Transition[] = [];
      for (const row of rows) {
        if (row.state === "pending") transitions.push(cancelPending(row));
        else if (row.state === "running" && !row.cancelRequested) runningIds.push(row.id);
      }
      if (runningIds.length) await ops.requestCancel(runningIds);
      return applyTransitions(rt, ops, transitions, now);
    });
    for (const e of events) this.events.emit(e);
    this.worker.abortCanceled(runningIds);
    return events.length + runningIds.length;
  }

  /**
   * Changes the pool's configuration in the store; every worker process of the pool
   * obeys it from its next claim.
   */
  async configure(options: ConfigureOptions): Promise<void> {
    const patch = checkConfigure(options);
    await this.readyPool();
    const config = await this.driver.ensurePool(
      this.name,
      { maxParallelism: this.opts.maxParallelism, logLevel: this.opts.logLevel },
      patch,
    );
    this.logger.level = config.logLevel;
    this.worker.wake();
  }

  /** Starts a worker for this pool in this process. Resolves once it is running. */
  async start(): Promise<void> {
    await this.readyPool();
    this.worker.start();
  }

  /**
   * Stops this process's worker: stops claiming, waits up to `timeoutMs` for running
   * attempts, then aborts what is left and hands it back without counting a failed attempt.
   */
  async stop(options?: StopOptions): Promise<void> {
    const given = options === undefined ? undefined : checkOptionKeys("options", options, ["timeoutMs"], "stop()").timeoutMs;
    const timeoutMs = given === undefined ? 30_000 : checkInt("timeoutMs", given, 0, 24 * 3600 * 1000);
    await this.worker.stop(timeoutMs);
  }

  /**
   * One deterministic step of the worker, for tests and scripts (no start() needed):
   * writes queued results, runs maintenance, claims due work and waits for those attempts
   * to finish and be recorded.
   */
  async runOnce(): Promise<RunOnceResult> {
    await this.readyPool();
    return this.worker.runOnce();
  }

  /** Number of attempts this process is running for the pool. */
  get running(): number {
    return this.worker.running;
  }

  /** Listens to an event (`enqueued`, `started`, `completed`, `report`). Returns an unsubscribe function. */
  on<K extends WorkpoolEventName>(event: K, listener: (e: WorkpoolEvents[K]) => void): () => void {
    if (!["enqueued", "started", "completed", "report"].includes(event)) {
      throw new InvalidArgumentError("event", `must be one of enqueued, started, completed, report, got ${describeValue(event)}`);
    }
    if (typeof listener !== "function") throw new InvalidArgumentError("listener", `must be a function, got ${describeValue(listener)}`);
    return this.events.on(event, listener);
  }

  /** Removes a listener added with on(). */
  off<K extends WorkpoolEventName>(event: K, listener: (e: WorkpoolEvents[K]) => void): void {
    this.events.off(event, listener);
  }
}

const MUTATION_OPTIONS = ["runAt", "runAfter", "onComplete", "context", "name", "tx"];
const ACTION_OPTIONS = [...MUTATION_OPTIONS, "retry", "timeoutMs"];

function checkBatch<A>(argsArray: readonly A[]): readonly A[] {
  if (!Array.isArray(argsArray)) throw new InvalidArgumentError("argsArray", "must be an array of args");
  if (argsArray.length > MAX_BATCH)
    throw new InvalidArgumentError("argsArray", `has ${argsArray.length} items; at most ${MAX_BATCH} per batch`);
  return argsArray;
}

function checkIds(field: string, ids: readonly unknown[]): string[] {
  if (!Array.isArray(ids)) throw new InvalidArgumentError(field, "must be an array of work ids");
  if (ids.length > MAX_BATCH) throw new InvalidArgumentError(field, `has ${ids.length} ids; at most ${MAX_BATCH} per call`);
  ids.forEach((id, i) => {
    if (!isWorkId(id))
      throw new InvalidArgumentError(
        ids.length === 1 && field === "id" ? "id" : `${field}[${i}]`,
        `is not a work id (26 characters, as returned by enqueue), got ${describeValue(id)}`,
      );
  });
  return ids as string[];
}

function toStatus(row: WorkRow): Status {
  switch (row.state) {
    case "pending":
      return { state: "pending", previousAttempts: row.attempt };
    case "running":
      return { state: "running", previousAttempts: row.attempt - 1 };
    case "finished": {
      const status: Extract<Status, { state: "finished" }> = { state: "finished", result: JSON.parse(row.result!) as RunResult };
      if (row.onComplete && row.ocState !== "none") {
        status.onComplete = { state: row.ocState, failedAttempts: row.ocAttempts };
        if (row.ocError !== null) status.onComplete.error = row.ocError;
      }
      return status;
    }
  }
}
