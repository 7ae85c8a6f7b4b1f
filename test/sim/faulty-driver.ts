/**
 * Fault injection around the real driver. Every store call a simulated process makes is
 * queued as an operation; the scheduler decides which one runs next and with which fault
 * (see FaultKind), so the order of database work comes from the seed, not from timing.
 * A dead process's calls never run and never settle: nothing of it runs again.
 */
import type { ClaimOptions, ClaimResult, CompleteResult, Driver, TxOps, WorkRow } from "../../src/driver/driver.js";
import { RunningWorkers } from "../../src/driver/running-workers.js";

/** What can go wrong with one store call. */
export type FaultKind =
  /** The call fails before reaching the store (a non-transient error). */
  | "failBefore"
  /** The call commits, then the caller sees a non-transient error. */
  | "failAfter"
  /** The connection drops before the call reaches the store (a transient error). */
  | "dropBefore"
  /** The call commits, then the connection drops before the answer arrives. */
  | "dropAfter"
  /** The process dies before the call reaches the store. */
  | "crashBefore"
  /** The process dies in the middle of the call's transaction: it rolls back. */
  | "crashInside"
  /** The call commits, then the process dies before it sees the answer. */
  | "crashAfter";

/** Every fault kind, in a fixed order (for traces and shrinking). */
export const FAULT_KINDS: readonly FaultKind[] = [
  "failBefore",
  "failAfter",
  "dropBefore",
  "dropAfter",
  "crashBefore",
  "crashInside",
  "crashAfter",
];

/** The process side of a queued call. */
export interface ProcHandle {
  readonly label: string;
  readonly dead: boolean;
}

/** One queued store call of a process. */
export interface SimOp {
  readonly seq: number;
  readonly proc: ProcHandle;
  readonly method: string;
  /** Runs the call on the real store; `crashAt` kills the process at that operation of its transaction. */
  run(crashAt: number | null): Promise<unknown>;
  resolve(value: unknown): void;
  reject(e: unknown): void;
  /** Not eligible before this time (a delayed heartbeat). */
  notBefore: number;
}

/** A claim that committed: the process and call that made it, its time and the rows it took. */
export interface ClaimSeen {
  proc: string;
  method: string;
  now: number;
  claimed: string[];
  /** The key of each row taken, in the order of `claimed`. */
  keys: (string | null)[];
  /** False when its transaction wrote after it: the rows at the commit no longer show the moment of the claim. */
  atCommit: boolean;
}

/** What the wrapper needs from the scheduler. */
export interface OpHost {
  /** Queues a call. */
  queue(op: Omit<SimOp, "seq" | "notBefore">): void;
  /** Registers a wake-up callback of a process (the store's own signals are not used). */
  subscribe(proc: ProcHandle, pool: string, onWake: () => void): () => void;
  /** Kills a process at once (from inside a transaction). */
  kill(proc: ProcHandle, why: string): void;
  /** Hears of each claim once it committed, before the call's answer reaches the process. */
  claimed(seen: ClaimSeen): void;
}

/** Thrown into a transaction whose process died, so the store rolls it back. */
export class SimCrash extends Error {
  constructor() {
    super("sim: the process crashed");
  }
}

/** A promise that never settles: what a dead process waits on. */
export const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/** Wraps `real` for one process: calls queue on `host` and die with the process. */
export function faultyDriver<Tx>(real: Driver<Tx>, proc: ProcHandle, host: OpHost): Driver<Tx> {
  // The process's own: the shared store's close() must not stop workers of processes that a run killed.
  const workers = new RunningWorkers();
  const call = (method: string, run: (crashAt: number | null) => Promise<unknown>): Promise<unknown> => {
    if (proc.dead) return never();
    return new Promise((resolve, reject) => {
      host.queue({
        proc,
        method,
        run,
        resolve: (v) => void (proc.dead || resolve(v)),
        reject: (e) => void (proc.dead || reject(e)),
      });
    });
  };
  return new Proxy(real, {
    get(target, prop) {
      if (prop === "workers") return workers;
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function" || typeof prop !== "string") return value;
      const fn = value as (...args: unknown[]) => unknown;
      switch (prop) {
        case "isTransientError":
          return fn.bind(target);
        case "subscribe":
          return (pool: string, onWake: () => void) => host.subscribe(proc, pool, onWake);
        case "close":
          // The run owns the shared store and closes it at the end.
          return () => Promise.resolve();
        case "transaction":
          return (body: (ops: TxOps<Tx>) => Promise<unknown>) =>
            call("transaction", async (crashAt) => {
              const seen: ClaimSeen[] = [];
              const result = await target.transaction(async (ops) => {
                const out = await body(dyingOps(ops, proc, host, crashAt, seen));
                // The body may have swallowed the crash: a dead process commits nothing.
                if (proc.dead) throw new SimCrash();
                return out;
              });
              for (const c of seen) host.claimed(c);
              return result;
            });
        case "claim":
          return (pool: string, opts: ClaimOptions) =>
            call(prop, async () => {
              const res = (await fn.call(target, pool, opts)) as ClaimResult;
              host.claimed(seenOf(proc, prop, res.now, res.claimed));
              return res;
            });
        case "complete":
          return (...args: unknown[]) =>
            call(prop, async () => {
              const res = (await fn.apply(target, args)) as CompleteResult;
              if (res.claim) host.claimed(seenOf(proc, prop, res.claim.now, res.claim.claimed));
              return res;
            });
        case "insertAndClaim":
          return (row: unknown, opts: ClaimOptions) =>
            call(prop, async () => {
              const res = (await fn.call(target, row, opts)) as WorkRow | null;
              host.claimed(seenOf(proc, prop, res?.startedAt ?? opts.clock(), res ? [res] : []));
              return res;
            });
        default:
          return (...args: unknown[]) => call(prop, () => Promise.resolve(fn.apply(target, args)));
      }
    },
  });
}

function seenOf(proc: ProcHandle, method: string, now: number, claimed: readonly WorkRow[]): ClaimSeen {
  return { proc: proc.label, method, now, claimed: claimed.map((r) => r.id), keys: claimed.map((r) => r.key), atCommit: true };
}

/**
 * The operations of one transaction, which die with the process (at `crashAt`, 1-based).
 * Claims made in it go to `seen`; a call after a claim marks it as not `atCommit`.
 */
function dyingOps<Tx>(ops: TxOps<Tx>, proc: ProcHandle, host: OpHost, crashAt: number | null, seen: ClaimSeen[]): TxOps<Tx> {
  let count = 0;
  return new Proxy(ops, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      const fn = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        if (crashAt !== null && ++count >= crashAt && !proc.dead) host.kill(proc, `inside a transaction, at ${String(prop)}`);
        if (proc.dead) return Promise.reject(new SimCrash());
        for (const c of seen) c.atCommit = false;
        if (prop !== "claim") return fn.apply(target, args);
        return (fn.apply(target, args) as Promise<ClaimResult>).then((res) => {
          seen.push(seenOf(proc, "transaction claim", res.now, res.claimed));
          return res;
        });
      };
    },
  });
}
