/**
 * Batch actions on the worker's side. Each claimed work of a batch action is an attempt of
 * its own (its own slot, lease, heartbeat, abort, timeout and outcome); here it waits until
 * `maxBatchSize` works of its handler are waiting or the first of them has waited
 * `maxWaitMs`, then one call of the handler runs them all and each attempt ends with its
 * own item's result. An item aborted meanwhile (cancel, timeout, lost lease, shutdown)
 * leaves at once with the abort's outcome, as an action does; its result is dropped.
 *
 * Works that waited (maxWaitMs > 0, a batch not filled by one claim) may have been
 * canceled from another process meanwhile, which this process learns only at its next
 * heartbeat: such a batch first reads its works (one read, no write), so a work canceled
 * before its batch starts is never handed to the handler.
 */
import type { TimerHandle } from "../clock.js";
import type { WorkRow } from "../driver/driver.js";
import type { Registered } from "../handlers.js";
import type { WorkId } from "../types.js";
import { AttemptAbortedError, type AttemptAbort } from "./attempt-abort.js";
import { batchOutcomes, thrownByBatch } from "./batch-results.js";
import type { BatchActionCtx, BatchItem } from "./batch-types.js";
import { fromAbort, runAction } from "./executor.js";
import type { AttemptOutput } from "./attempt-output.js";
import type { PoolRuntime } from "./runtime.js";
import type { AttemptOutcome } from "./transitions/outcome.js";

type BatchHandler<Tx> = Registered<Tx> & { kind: "batchAction" };

/** One claimed work of a batch action, waiting for its batch or in it. */
interface Item {
  row: WorkRow;
  abort: AttemptAbort;
  /** Ends the item's attempt with this outcome (the first call wins). */
  settle(outcome: AttemptOutcome | null): void;
  /** The batch it runs in, once started: told when the item is aborted. */
  batch: RunningBatch | null;
  /** Its timeout, armed when its batch starts. */
  timer: TimerHandle | null;
  /** The synchronous stretch it was queued in (see BatchRunner.stretch). */
  stretch: number;
}

interface RunningBatch {
  /** Items not yet aborted. */
  live: number;
  controller: AbortController;
}

/** The waiting items of one handler, and the timer that starts them. */
interface Waiting {
  items: Item[];
  /** Set while a start is scheduled (the maxWaitMs timer, or the next turn for maxWaitMs 0). */
  scheduled: boolean;
  timer: TimerHandle | null;
}

/** The batch actions of one pool instance's running attempts. */
export class BatchRunner<Tx> {
  private readonly waiting = new Map<string, Waiting>();
  /**
   * Numbers the synchronous stretches in which works are queued: the rows of one claim are
   * queued in one, so a batch whose works all share the current one has not waited.
   */
  private stretch = 0;
  private stretchEnding = false;

  constructor(private readonly rt: PoolRuntime<Tx>) {}

  /**
   * Runs an action attempt: in a batch when its handler is a batch action, else alone
   * (executor.ts) with `output`, its progress and log lines. Batch items report neither.
   * Resolves with its outcome, or null when it must not be written.
   */
  runAction(row: WorkRow, abort: AttemptAbort, output: () => AttemptOutput): Promise<AttemptOutcome | null> {
    const handler = this.rt.handlers.get(row.fnName);
    if (handler?.kind !== "batchAction") return runAction(this.rt, row, abort, output);
    if (abort.aborted) return Promise.resolve(fromAbort(abort));
    return new Promise<AttemptOutcome | null>((resolve) => {
      let settled = false;
      const item: Item = {
        row,
        abort,
        batch: null,
        timer: null,
        stretch: this.currentStretch(),
        settle: (outcome) => {
          if (settled) return;
          settled = true;
          if (item.timer !== null) this.rt.options.clock.clearTimeout(item.timer);
          resolve(outcome);
        },
      };
      const queue = this.queue(row.fnName);
      queue.items.push(item);
      abort.onAbort(() => {
        // The queue it waits in now: one that asked the store before its batch puts it back in a new one.
        const waiting = this.waiting.get(row.fnName);
        const at = waiting ? waiting.items.indexOf(item) : -1;
        if (waiting && at >= 0) {
          waiting.items.splice(at, 1);
          if (!waiting.items.length) this.unschedule(waiting);
        }
        if (item.batch && --item.batch.live === 0) item.batch.controller.abort(abort.reason);
        item.settle(fromAbort(abort));
      });
      if (queue.items.length >= handler.maxBatchSize) this.startWaiting(row.fnName, handler);
      else this.schedule(row.fnName, handler, queue);
    });
  }

  private currentStretch(): number {
    if (!this.stretchEnding) {
      this.stretchEnding = true;
      queueMicrotask(() => {
        this.stretch++;
        this.stretchEnding = false;
      });
    }
    return this.stretch;
  }

  /** Starts every waiting batch now, without waiting out maxWaitMs (runOnce(), stop()). */
  startAll(): void {
    for (const name of [...this.waiting.keys()]) {
      const handler = this.rt.handlers.get(name);
      if (handler?.kind === "batchAction") this.startWaiting(name, handler);
    }
  }

  private queue(name: string): Waiting {
    let queue = this.waiting.get(name);
    if (!queue) {
      queue = { items: [], scheduled: false, timer: null };
      this.waiting.set(name, queue);
    }
    return queue;
  }

  /** Starts the queue's items when its first has waited maxWaitMs (0: once this turn's claims are in). */
  private schedule(name: string, handler: BatchHandler<Tx>, queue: Waiting): void {
    if (queue.scheduled) return;
    queue.scheduled = true;
    const fire = (): void => {
      queue.timer = null;
      if (queue.scheduled) this.startWaiting(name, handler);
    };
    // Not on the clock for 0: a test's ManualClock fires timers only when advanced.
    if (handler.maxWaitMs === 0) setImmediate(fire);
    else queue.timer = this.rt.options.clock.setTimeout(fire, handler.maxWaitMs);
  }

  private unschedule(queue: Waiting): void {
    queue.scheduled = false;
    if (queue.timer !== null) this.rt.options.clock.clearTimeout(queue.timer);
    queue.timer = null;
  }

  /** Starts the waiting items of `name` in batches of at most maxBatchSize. */
  private startWaiting(name: string, handler: BatchHandler<Tx>): void {
    const queue = this.waiting.get(name);
    if (!queue) return;
    this.unschedule(queue);
    this.waiting.delete(name);
    const items = queue.items.splice(0);
    for (let i = 0; i < items.length; i += handler.maxBatchSize) {
      const batch = items.slice(i, i + handler.maxBatchSize);
      // A full batch from one claim starts as fresh as an action does.
      const waited = handler.maxWaitMs > 0 && batch.some((item) => item.stretch !== this.stretch || !this.stretchEnding);
      if (waited) void this.confirmThenStart(name, handler, batch);
      else this.start(name, handler, batch);
    }
  }

  /**
   * Reads the items' rows and aborts those canceled or no longer this worker's (rescued
   * after a lapsed lease), then starts the rest. When the store does not answer, the items
   * wait again.
   */
  private async confirmThenStart(name: string, handler: BatchHandler<Tx>, items: Item[]): Promise<void> {
    const { rt } = this;
    try {
      const rows = new Map(
        (
          await rt.driver.readWork(
            rt.pool,
            items.map((i) => i.row.id),
          )
        ).map((r) => [r.id, r]),
      );
      for (const item of items) {
        const row = rows.get(item.row.id);
        const mine = row?.state === "running" && row.attempt === item.row.attempt && row.workerId === rt.workerId;
        if (!mine)
          item.abort.abort(new AttemptAbortedError("lost", "this worker lost the attempt's lease; it was handed to another worker"));
        else if (row.cancelRequested) item.abort.abort(new AttemptAbortedError("canceled", "the work was canceled"));
      }
    } catch (e) {
      const left = items.filter((i) => !i.abort.aborted);
      rt.logger.error(`workpool: checking ${left.length} work(s) of batch action "${name}" before their batch failed; they wait again`, e);
      if (!left.length) return;
      const queue = this.queue(name);
      queue.items.unshift(...left);
      this.schedule(name, handler, queue);
      return;
    }
    const live = items.filter((i) => !i.abort.aborted);
    if (live.length) this.start(name, handler, live);
  }

  /** One call of the handler for `items`; each item's attempt ends with its own result. */
  private start(name: string, handler: BatchHandler<Tx>, items: Item[]): void {
    const { clock, actionTimeoutMs } = this.rt.options;
    const batch: RunningBatch = { live: items.length, controller: new AbortController() };
    for (const item of items) {
      item.batch = batch;
      const timeoutMs = item.row.timeoutMs ?? actionTimeoutMs;
      if (timeoutMs !== null) {
        item.timer = clock.setTimeout(
          () => item.abort.abort(new AttemptAbortedError("timeout", `timed out after ${timeoutMs} ms`)),
          timeoutMs,
        );
      }
    }
    const ctx: BatchActionCtx = {
      name,
      get signal(): AbortSignal {
        return batch.controller.signal;
      },
    };
    let answer: Promise<unknown>;
    try {
      answer = Promise.resolve(handler.fn(ctx, items.map(toBatchItem)));
    } catch (e) {
      answer = Promise.reject(e);
    }
    answer.then(
      (results) => {
        const outcomes = batchOutcomes(name, results, items.length);
        items.forEach((item, i) => item.settle(outcomes[i]!));
      },
      (e: unknown) => {
        const outcome = thrownByBatch(e);
        for (const item of items) item.settle(outcome);
      },
    );
  }
}

function toBatchItem(item: Item): BatchItem<unknown> {
  const { row, abort } = item;
  return {
    workId: row.id as WorkId,
    args: JSON.parse(row.args) as unknown,
    attempt: row.attempt,
    name: row.name ?? row.fnName,
    get signal(): AbortSignal {
      return abort.signal;
    },
  };
}
