/**
 * The public types of batch actions: what a batch handler receives and returns, and the
 * options of `defineBatchAction`.
 */
import type { WorkId } from "../types.js";

/** One work of a batch, as the batch handler receives it. */
export interface BatchItem<A> {
  /** Id of the work this item is. */
  workId: WorkId;
  /** The work's args, as enqueued. */
  args: A;
  /** 1-based attempt number of this work (items of one batch may be on different attempts). */
  attempt: number;
  /** The work's name: enqueue's `name` option, else the handler's name. */
  name: string;
  /**
   * Aborted when this item is canceled, times out, loses its lease or its worker shuts
   * down. The item has then left the batch: whatever the handler returns for it is dropped.
   */
  signal: AbortSignal;
}

/** What a batch action receives besides its items. */
export interface BatchActionCtx {
  /** The batch handler's name. */
  name: string;
  /** Aborted once every item of the batch is aborted (see {@link BatchItem.signal}). */
  signal: AbortSignal;
}

/**
 * A batch action handler: gets up to `maxBatchSize` works and returns one result per item,
 * in the same order. An `Error` in place of a result fails that item alone, as if its own
 * action had thrown it (a `NonRetryableError` is not retried); throwing fails every item.
 */
export type BatchActionFn<A, R> = (ctx: BatchActionCtx, items: BatchItem<A>[]) => readonly (R | Error)[] | Promise<readonly (R | Error)[]>;

/** Options of `defineBatchAction`. */
export interface BatchActionOptions {
  /** Most works one call of the handler gets: an integer from 1 to 1000; default 100. */
  maxBatchSize?: number;
  /**
   * How long (ms) a claimed work waits for more to fill its batch: an integer from 0 to
   * 60000; default 0 (a batch takes the works claimed by then).
   */
  maxWaitMs?: number;
}
