/**
 * Helpers shared by the store test suites: a silent and a capturing logger, a fixed start time, and
 * small promises to await events and aborts instead of sleeping.
 */
import type { Logger, LogFields, WorkpoolEventName, WorkpoolEvents } from "../../src/index.js";

/** A logger that writes nothing, for tests that do not look at logs. */
export const quietLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** A logger that keeps every line, for assertions on what was logged. */
export class CapturingLogger implements Logger {
  /** Each record; `text` is an event's JSON, or the message followed by its error's message. */
  readonly lines: { level: string; text: string; fields: LogFields; message: string }[] = [];
  private push(level: string, fields: LogFields, message: string): void {
    const { err } = fields;
    const text =
      fields.event !== undefined
        ? JSON.stringify(fields)
        : err === undefined
          ? message
          : `${message} ${err instanceof Error ? err.message : String(err)}`;
    this.lines.push({ level, text, fields, message });
  }
  debug(fields: LogFields, message: string): void {
    this.push("debug", fields, message);
  }
  info(fields: LogFields, message: string): void {
    this.push("info", fields, message);
  }
  warn(fields: LogFields, message: string): void {
    this.push("warn", fields, message);
  }
  error(fields: LogFields, message: string): void {
    this.push("error", fields, message);
  }
  /** Lines containing `text`. */
  matching(text: string): string[] {
    return this.lines.filter((l) => l.text.includes(text)).map((l) => l.text);
  }
}

/** Fixed start time: far from the epoch and from now, so no test depends on the real date. */
export const T0 = Date.UTC(2030, 0, 1);

/** Anything that emits the pool's events: a Workpool or an ActionRetrier. */
export interface EventSource {
  on<K extends WorkpoolEventName>(name: K, listener: (e: WorkpoolEvents[K]) => void): () => void;
}

/** Resolves with the next `name` event of `pool` that matches `filter`. */
export function nextEvent<K extends WorkpoolEventName>(
  source: EventSource,
  name: K,
  filter: (e: WorkpoolEvents[K]) => boolean = () => true,
): Promise<WorkpoolEvents[K]> {
  return new Promise((resolve) => {
    const off = source.on(name, (e) => {
      if (filter(e)) {
        off();
        resolve(e);
      }
    });
  });
}

/** A promise with its resolve function, for actions the test releases by hand. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Resolves when `signal` aborts. */
export function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener("abort", () => resolve(signal.reason), { once: true });
  });
}

/**
 * A seeded source of jitter in [0, 1) (mulberry32): real, uneven values as Math.random
 * gives, the same on every run of a test.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
