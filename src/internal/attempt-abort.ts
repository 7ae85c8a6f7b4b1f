/**
 * How a running action attempt is aborted. Most actions never read `ctx.signal`, and an
 * AbortController with its signal and listener costs several microseconds per attempt
 * in Node (a measurable share of a no-op drain), so the controller is made only when the
 * handler first reads the signal; the executor waits on a plain callback instead.
 */

/** Why a running attempt's signal was aborted. */
export type AbortCause = "canceled" | "timeout" | "lost" | "shutdown";

/** The abort reason a pool puts on `ctx.signal`. */
export class AttemptAbortedError extends Error {
  constructor(
    readonly abortCause: AbortCause,
    message: string,
  ) {
    super(message);
    this.name = abortCause === "timeout" ? "TimeoutError" : "AbortError";
  }
}

/** The abort state of one attempt; its AbortSignal exists only once asked for. */
export class AttemptAbort {
  private controller: AbortController | null = null;
  private why: AttemptAbortedError | null = null;
  private listener: (() => void) | null = null;

  /** Whether the attempt was aborted. */
  get aborted(): boolean {
    return this.why !== null;
  }

  /** Why the attempt was aborted, or null. */
  get reason(): AttemptAbortedError | null {
    return this.why;
  }

  /** The signal handed to the action as `ctx.signal`; made (already aborted if need be) on first use. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.why) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  /** Aborts the attempt with `reason`; later calls are ignored (the first reason wins). */
  abort(reason: AttemptAbortedError): void {
    if (this.why) return;
    this.why = reason;
    this.controller?.abort(reason);
    const listener = this.listener;
    this.listener = null;
    listener?.();
  }

  /**
   * Calls `fn` once when the attempt is aborted (at once if it already was). One
   * listener at a time: the executor's. Returns a function that removes it.
   */
  onAbort(fn: () => void): () => void {
    if (this.why) {
      fn();
      return () => undefined;
    }
    this.listener = fn;
    return () => {
      if (this.listener === fn) this.listener = null;
    };
  }
}
