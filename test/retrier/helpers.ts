/**
 * What the ActionRetrier suite needs from a store, and small helpers to await events
 * instead of sleeping. Each store's *.test.ts supplies a factory; the suite is identical.
 */
import type { ActionRetrier, Logger, Store, WorkpoolEventName, WorkpoolEvents } from "../../src/index.js";

/** One fresh, isolated store (own file or schema) plus app-table helpers in its SQL. */
export interface RetrierTestStore<Tx> {
  store: Store<Tx>;
  /** Closes the store and deletes what create() made. */
  dispose(): Promise<void>;
  /**
   * Runs `fn` in a transaction on a connection the application owns, then commits (or
   * rolls back). Resolves after the transaction ended and `fn`'s returned value settled.
   */
  inAppTransaction(fn: (tx: Tx) => unknown, rollback: boolean): Promise<void>;
  /** Creates the app table `app_rows (k TEXT PRIMARY KEY)`. */
  createAppTable(): Promise<void>;
  /** Inserts `k` into app_rows with a handler's transaction handle (sync on SQLite, a promise on PostgreSQL). */
  insertAppRow(tx: Tx, k: string): unknown;
  /** Keys in app_rows, sorted. */
  appRows(): Promise<string[]>;
}

/** Makes fresh stores for one database. */
export interface RetrierStoreFactory<Tx> {
  /** Shown in test titles ("sqlite", "postgres"). */
  name: string;
  create(): Promise<RetrierTestStore<Tx>>;
}

/** Fixed start time, far from now, so no test depends on the real date. */
export const T0 = Date.UTC(2030, 0, 1);

/** A logger that keeps every line. */
export class LinesLogger implements Logger {
  readonly lines: string[] = [];
  private push(args: unknown[]): void {
    this.lines.push(args.map((a) => (a instanceof Error ? a.message : String(a))).join(" "));
  }
  debug(...args: unknown[]): void {
    this.push(args);
  }
  info(...args: unknown[]): void {
    this.push(args);
  }
  warn(...args: unknown[]): void {
    this.push(args);
  }
  error(...args: unknown[]): void {
    this.push(args);
  }
  /** Lines containing `text`. */
  matching(text: string): string[] {
    return this.lines.filter((l) => l.includes(text));
  }
}

/** Resolves with the next `name` event of `retrier` that matches `filter`. */
export function nextEvent<Tx, K extends WorkpoolEventName>(
  retrier: ActionRetrier<Tx>,
  name: K,
  filter: (e: WorkpoolEvents[K]) => boolean = () => true,
): Promise<WorkpoolEvents[K]> {
  return new Promise((resolve) => {
    const off = retrier.on(name, (e) => {
      if (filter(e)) {
        off();
        resolve(e);
      }
    });
  });
}

/** A promise with its resolve function, for actions the test releases by hand. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

/** Resolves with the abort reason when `signal` aborts. */
export function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener("abort", () => resolve(signal.reason), { once: true });
  });
}

/** The error `call` throws or rejects with (undefined if none): the API may do either. */
export async function errorOf(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (e) {
    return e;
  }
  return undefined;
}
