/**
 * Compile-time checks of batch actions: the handle they return is a typed action handle
 * (args from the items, result without the Errors that fail items), and mistakes are
 * rejected. Never run, only type-checked.
 */
import { NonRetryableError, Workpool, type ActionHandle, type BatchItem, type ResultOf, type Store } from "../../src/index.js";

declare const store: Store<unknown>;

export async function batchActions(): Promise<void> {
  const pool = new Workpool(store, { name: "embed" });
  const embed = pool.defineBatchAction(
    "embed",
    async (ctx, items: BatchItem<{ text: string }>[]) => {
      ctx.signal.throwIfAborted();
      return items.map((i) => (i.args.text ? { length: i.args.text.length } : new NonRetryableError("empty text")));
    },
    { maxBatchSize: 100, maxWaitMs: 50 },
  );
  // The handle is an action handle: enqueued like any action, its result is the item type.
  const handle: ActionHandle<{ text: string }, { length: number }, "embed"> = embed;
  const length: ResultOf<typeof embed> = { length: 1 };
  void handle;
  void length;
  await pool.enqueueAction(embed, { text: "hi" });
  await pool.enqueueActionBatch(embed, [{ text: "a" }, { text: "b" }], { retry: true });

  // @ts-expect-error args of the wrong type
  await pool.enqueueAction(embed, { text: 1 });
  // @ts-expect-error the handler must return an array of results
  pool.defineBatchAction("one", (_ctx, items: BatchItem<number>[]) => items.length);
  // @ts-expect-error args must be JSON
  pool.defineBatchAction("dates", (_ctx, items: BatchItem<{ at: Date }>[]) => items.map(() => 1));
  // @ts-expect-error unknown option key
  pool.defineBatchAction("opts", (_ctx, items: BatchItem<number>[]) => items, { maxSize: 3 });
}
