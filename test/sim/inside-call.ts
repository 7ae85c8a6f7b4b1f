/**
 * The transaction a simulated process is running, as code inside it sees it. A workflow's
 * advance, a step's onComplete and a run's cancel call the driver again from inside the
 * transaction they run in (an enqueue, a cancel, the journal's operations): those calls are
 * part of the store call the scheduler is running, so they go straight to the store
 * instead of waiting in the queue (where they would wait for good), and they count as
 * operations of the transaction, so a crash inside it may strike at any of them.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { ProcHandle } from "./faulty-driver.js";

/** A queued transaction while it runs. */
export interface RunningTx {
  readonly proc: ProcHandle;
  /** False once the transaction settled: work it started that outlives it no longer joins it. */
  open: boolean;
  /** Called before each operation inside it: counts it, may kill the process (then throws). */
  op(what: string): void;
  /** Set when a call inside it wrote new work: the other processes are woken once it committed. */
  inserted: boolean;
}

const storage = new AsyncLocalStorage<RunningTx>();
let running = 0;

/** Runs `fn` (the body of a transaction) as `tx`. */
export async function runInside<T>(tx: RunningTx, fn: () => Promise<T>): Promise<T> {
  running++;
  try {
    return await storage.run(tx, fn);
  } finally {
    tx.open = false;
    // An enabled storage runs a hook on every promise: off while no transaction runs.
    if (--running === 0) storage.disable();
  }
}

/** The open transaction of `proc` the calling code runs inside, or null. */
export function insideOf(proc: ProcHandle): RunningTx | null {
  const tx = storage.getStore();
  return tx && tx.open && tx.proc === proc ? tx : null;
}

/** `target` with `tx.op()` called before each of its methods (the transaction's operations). */
export function counted<T extends object>(target: T, tx: RunningTx, onCall?: (name: string) => void): T {
  return new Proxy(target, {
    get(t, prop) {
      const value: unknown = Reflect.get(t, prop, t);
      if (typeof value !== "function" || typeof prop !== "string") return value;
      const fn = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        tx.op(prop);
        onCall?.(prop);
        return fn.apply(t, args);
      };
    },
  });
}
