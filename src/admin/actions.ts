/**
 * What the admin API changes, each through the transition a pool would use: cancel
 * (cancelWork), retry (a new enqueue, recorded on the work it retries), purge (retention's delete, or cancel then delete),
 * and the pool's stored limit. None needs a handler: onComplete of work the admin
 * finishes is delivered by a worker of its pool (see runtime.ts).
 */
import type { Clock } from "../clock.js";
import type { PoolLimitChange } from "../driver/pool-ops.js";
import type { Driver } from "../driver/driver.js";
import { newWorkLike } from "../driver/work-columns.js";
import { InvalidArgumentError, UnknownWorkError } from "../errors.js";
import { newWorkId } from "../ids.js";
import { cancelWork } from "../internal/transitions/cancel.js";
import { DEFAULT_MAX_PARALLELISM } from "../options.js";
import type { WorkId } from "../types.js";
import { adminRuntime } from "./runtime.js";

/** The refusal of a second retry of `id`. */
function alreadyRetried(id: string, retriedAs: string): InvalidArgumentError {
  return new InvalidArgumentError("id", `work ${id} was already retried as ${retriedAs}`);
}

/** Rows listed and canceled or deleted per transaction. */
const BATCH = 500;

/** The admin's writes on one store. */
export class AdminActions<Tx> {
  constructor(
    private readonly driver: Driver<Tx>,
    private readonly clock: Clock,
  ) {}

  /** Cancels the given work of `pool`; returns how many it finished or marked. */
  async cancelIds(pool: string, ids: readonly string[]): Promise<number> {
    if (!ids.length) return 0;
    const { events, running } = await cancelWork(adminRuntime(this.driver, pool, this.clock), ids);
    return events.length + running.length;
  }

  /** Cancels one work wherever it is; false if it is unknown or already finished or being canceled. */
  async cancel(id: string): Promise<boolean> {
    const row = await this.driver.readWorkDetail(id);
    return row !== null && (await this.cancelIds(row.pool, [id])) > 0;
  }

  /** Cancels, batch by batch, the unfinished work of `pool` enqueued before `before`. */
  async cancelAll(pool: string, before: number, only: { fnName: string | null; key: string | null }, pendingOnly = false): Promise<number> {
    let total = 0;
    const filter = {
      ...(only.fnName === null ? {} : { fnName: only.fnName }),
      ...(only.key === null ? {} : { key: only.key }),
      pendingOnly,
    };
    for (;;) {
      const ids = await this.driver.listCancelable(pool, before, BATCH, filter);
      if (!ids.length) return total;
      total += await this.cancelIds(pool, ids);
    }
  }

  /**
   * Enqueues a finished failed or canceled work again, as new work with its handler, args
   * and options, and records the new work on it: a work is retried once. The check before
   * the write is for the message; the store's write is what refuses a concurrent second retry.
   */
  async retry(id: string): Promise<WorkId> {
    const row = await this.driver.readWorkDetail(id);
    if (!row) throw new UnknownWorkError(id);
    const kind = row.result === null ? null : (JSON.parse(row.result) as { kind: string }).kind;
    if (row.state !== "finished" || (kind !== "failed" && kind !== "canceled")) {
      const what = row.state === "finished" ? `finished with ${kind}` : row.state;
      throw new InvalidArgumentError("id", `work ${id} is ${what}; only finished work that failed or was canceled can be retried`);
    }
    if (row.retriedAs !== null) throw alreadyRetried(id, row.retriedAs);
    const now = this.clock.now();
    // A retry is new work of its own: it takes no unique key (the old one was freed when it started).
    const work = newWorkLike(row, newWorkId(now), now);
    if (await this.driver.retryWork(id, work)) return work.id as WorkId;
    // Another retry of this work won the race (or retention deleted it meanwhile).
    const after = await this.driver.readWorkDetail(id);
    if (after?.retriedAs == null) throw new UnknownWorkError(id);
    throw alreadyRetried(id, after.retriedAs);
  }

  /** Deletes finished work of `pool` finished before `before` whose onComplete is settled. */
  async purgeFinished(pool: string, before: number): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.driver.deleteFinishedBefore(pool, before, BATCH);
      total += n;
      if (n < BATCH) return total;
    }
  }

  /**
   * Cancels pending work of `pool` enqueued before `before` (never running work) and
   * deletes what needs no onComplete at once; work with an onComplete stays until a
   * worker has delivered it, then retention deletes it. Returns how many it canceled.
   */
  async purgePending(pool: string, before: number): Promise<number> {
    let total = 0;
    for (;;) {
      const ids = await this.driver.listCancelable(pool, before, BATCH, { pendingOnly: true });
      if (!ids.length) return total;
      total += await this.cancelIds(pool, ids);
      await this.driver.deleteFinishedIds(pool, ids);
    }
  }

  /** Changes the pool's stored limit, seeding the default configuration for a pool that has only work. */
  async changeLimit(pool: string, change: PoolLimitChange): Promise<void> {
    await this.driver.ensurePool(pool, { maxParallelism: DEFAULT_MAX_PARALLELISM, logLevel: "REPORT", keyParallelism: null }, {});
    await this.driver.changePoolLimit(pool, change);
  }
}
