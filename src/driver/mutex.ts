/**
 * A first-come, first-served async lock. The SQLite driver has one connection; while a
 * transaction awaits a handler, nothing else may use that connection, or its statements
 * would land inside the open transaction.
 */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  /** Runs `fn` once every earlier caller has finished; returns its result. */
  run<T>(fn: () => Promise<T> | T): Promise<T> {
    const result = this.tail.then(fn);
    // The chain continues whether fn resolved or threw.
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
