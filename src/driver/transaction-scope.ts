/**
 * Which of a store's transactions the current async context runs inside, so calls a
 * handler makes to the pool from inside its transaction join it instead of waiting for
 * a connection the transaction holds. Both drivers use it.
 *
 * While an AsyncLocalStorage is enabled, Node 20 runs a hook on every promise the process
 * creates, a measurable share of a busy worker's time. With no transaction open there is
 * nothing to find, so the storage is switched off then; the next run() switches it on.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** A transaction as code running inside it sees it; `open` turns false once it settled. */
export interface ScopedTransaction {
  open: boolean;
}

/** Tracks the open transaction of each async context. */
export class TransactionScope<T extends ScopedTransaction> {
  private readonly storage = new AsyncLocalStorage<T>();
  private running = 0;

  /** The transaction the calling code runs inside, if it is still open. */
  current(): T | null {
    const tx = this.storage.getStore();
    return tx?.open ? tx : null;
  }

  /**
   * Runs `fn` with `tx` as the current transaction. Work `fn` starts inherits it but may
   * outlive it: `tx.open` is false once `fn` settles, so such work no longer joins it.
   */
  async run<R>(tx: T, fn: () => Promise<R>): Promise<R> {
    this.running++;
    try {
      return await this.storage.run(tx, fn);
    } finally {
      tx.open = false;
      if (--this.running === 0) this.storage.disable();
    }
  }
}
