/**
 * The gate in front of the real driver, where a `hold` fault stops a store call: the call
 * was made (the process and any wrapper above the gate, such as a broken variant, did
 * their part, reading the clock perhaps) but has not reached the store. It reaches it
 * when the scheduler releases it, in a later step, while nothing else runs: the one store
 * call of that step.
 */
import type { Driver } from "../../src/driver/driver.js";

/** A call stopped at the gate. */
export interface HeldCall {
  /** Lets the call on to the store; settles as the call does. */
  release(): Promise<unknown>;
}

type Method = (...args: unknown[]) => unknown;

/** Holds the first store call a run makes while `hold` runs it; lets every other call through. */
export class StoreGate {
  private catching = false;
  private caught: (() => void) | null = null;

  /** The driver behind the gate. */
  wrap<Tx>(real: Driver<Tx>): Driver<Tx> {
    return new Proxy(real, {
      get: (target, prop) => {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        const fn = value as Method;
        // Not a store call: answers at once.
        if (prop === "isTransientError") return fn.bind(target);
        return (...args: unknown[]) => {
          if (!this.catching) return fn.apply(target, args);
          this.catching = false;
          return new Promise<void>((open) => (this.caught = open)).then(() => fn.apply(target, args));
        };
      },
    });
  }

  /**
   * Starts `run` (a queued call's run) with its first call to the driver held at the gate.
   * Every wrapper makes that call as soon as it is called, so it is caught before `run`
   * returns. Returns the held call, or null when `run` made none (it then goes on unheld
   * and `done` settles as it does).
   */
  hold(run: () => Promise<unknown>): { held: HeldCall | null; done: Promise<unknown> } {
    this.catching = true;
    this.caught = null;
    let done: Promise<unknown>;
    try {
      done = run();
    } finally {
      this.catching = false;
    }
    const open = this.caught as (() => void) | null;
    this.caught = null;
    if (!open) return { held: null, done };
    return {
      held: {
        release: () => {
          open();
          return done;
        },
      },
      done,
    };
  }
}
