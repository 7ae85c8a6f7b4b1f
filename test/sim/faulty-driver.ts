/**
 * Fault injection around the real driver. Every store call a simulated process makes is
 * queued as an operation; the scheduler decides which one runs next and with which fault
 * (see FaultKind), so the order of database work comes from the seed, not from timing.
 * A dead process's calls never run and never settle: nothing of it runs again.
 */
import type {
  AttemptRef,
  ClaimOptions,
  ClaimResult,
  CompleteResult,
  Driver,
  HeartbeatResult,
  LeaseRenewal,
  TxOps,
  WorkRow,
} from "../../src/driver/driver.js";
import { RunningWorkers } from "../../src/driver/running-workers.js";
import type { WorkflowOps } from "../../src/driver/workflow-ops.js";
import { counted, insideOf, runInside, type RunningTx } from "./inside-call.js";
import type { HeldCall } from "./store-gate.js";

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
  | "crashAfter"
  /**
   * A call for which the store reads the clock (a claim, a heartbeat), or a workflow
   * advance's commit, is held after it is made, before it reaches the store, while time
   * moves on (a wait for a lock or a connection).
   */
  | "hold"
  /** A heartbeat waits until an attempt it names ended and this process began a newer attempt of that work. */
  | "holdHeartbeat"
  /** A workflow advance's commit waits until another advance of the same run has read the run's journal. */
  | "holdAdvance";

/** The faults drawn for a store call from the run's main stream, in a fixed order. */
export const CALL_FAULTS: readonly FaultKind[] = [
  "failBefore",
  "failAfter",
  "dropBefore",
  "dropAfter",
  "crashBefore",
  "crashInside",
  "crashAfter",
];

/** The holds, drawn from a stream of their own (so runs without them are the runs their seeds made before). */
export const HOLD_FAULTS: readonly FaultKind[] = ["hold", "holdHeartbeat", "holdAdvance"];

/** Every fault kind, in a fixed order (for traces and shrinking). */
export const FAULT_KINDS: readonly FaultKind[] = [...CALL_FAULTS, ...HOLD_FAULTS];

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
  /** Whether a hold may delay it: a call for which the store reads the clock (a claim alone, with completions or on insert, a heartbeat), or a workflow advance's commit. */
  readonly timed: boolean;
  /** A heartbeat's attempts (null for other calls). */
  readonly refs: readonly AttemptRef[] | null;
  /** For a workflow advance's commit: the run it advances (null for other calls). */
  readonly advance?: string | null;
  /** Not eligible before this time (a delayed heartbeat, a held call). */
  notBefore: number;
  /** Not eligible until this says so (a heartbeat held for a newer attempt), unless null. */
  waitFor: (() => boolean) | null;
  /** Made and held short of the store: running it releases this. */
  held: HeldCall | null;
  /** Whether a hold was drawn for it already (each call is held at most once). */
  holdDrawn: boolean;
  /** For a transaction: whether it wrote new work (the other processes are then woken, as after an insert). */
  readonly wakes?: () => boolean;
}

/** A claim that committed: the process and call that made it, its time and the rows it took. */
export interface ClaimSeen {
  proc: string;
  method: string;
  /** The claim's time as the driver reports it (`ClaimResult.now`, or the claimed row's start). */
  now: number;
  /** The simulated time at which the call ran in the store. */
  ranAt: number;
  claimed: string[];
  /** The attempt each row taken is on, in the order of `claimed`. */
  attempts: number[];
  /** The key of each row taken, in the order of `claimed`. */
  keys: (string | null)[];
  /** False when its transaction wrote after it: the rows at the commit no longer show the moment of the claim. */
  atCommit: boolean;
}

/** A heartbeat that ran in the store: whose, when, the attempts it named and those it answered lost. */
export interface HeartbeatSeen {
  proc: string;
  workerId: string;
  ranAt: number;
  refs: readonly AttemptRef[];
  lost: readonly AttemptRef[];
}

/** A queued call as the wrapper makes it. */
export type NewOp = Pick<SimOp, "proc" | "method" | "timed" | "refs" | "run" | "resolve" | "reject" | "wakes" | "advance">;

/** What the wrapper needs from the scheduler. */
export interface OpHost {
  /** The simulated time. */
  now(): number;
  /** Queues a call. */
  queue(op: NewOp): void;
  /** Registers a wake-up callback of a process (the store's own signals are not used). */
  subscribe(proc: ProcHandle, pool: string, onWake: () => void): () => void;
  /** Kills a process at once (from inside a transaction). */
  kill(proc: ProcHandle, why: string): void;
  /** Hears of each claim once it committed, before the call's answer reaches the process. */
  claimed(seen: ClaimSeen): void;
  /** Hears of each heartbeat once it ran, before its answer reaches the process. */
  heartbeat(seen: HeartbeatSeen): void;
  /** Hears of each read of a run's journal outside a transaction (an advance's), once it ran. */
  advanceRead(runId: string): void;
}

/** Thrown into a transaction whose process died, so the store rolls it back. */
export class SimCrash extends Error {
  constructor() {
    super("sim: the process crashed");
  }
}

/** A promise that never settles: what a dead process waits on. */
export const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/**
 * Wraps `real` for one process: calls queue on `host` and die with the process. A call made
 * from inside one of the process's running transactions (inside-call.ts) goes straight to
 * the store, as part of that transaction.
 */
export function faultyDriver<Tx>(real: Driver<Tx>, proc: ProcHandle, host: OpHost): Driver<Tx> {
  // The process's own: the shared store's close() must not stop workers of processes that a run killed.
  const workers = new RunningWorkers();
  // Set by an advance's read of a run's journal: its next transaction is the advance's commit, which a hold may delay.
  let advancing: string | null = null;
  const call = (
    method: string,
    run: (crashAt: number | null) => Promise<unknown>,
    timed = false,
    refs: readonly AttemptRef[] | null = null,
    wakes?: () => boolean,
    advance: string | null = null,
  ): Promise<unknown> => {
    if (proc.dead) return never();
    return new Promise((resolve, reject) => {
      host.queue({
        proc,
        method,
        timed,
        refs,
        run,
        resolve: (v) => void (proc.dead || resolve(v)),
        reject: (e) => void (proc.dead || reject(e)),
        ...(wakes ? { wakes } : {}),
        ...(advance !== null ? { advance } : {}),
      });
    });
  };
  const queued = (target: Driver<Tx>, prop: string, fn: (...args: unknown[]) => unknown): ((...args: never[]) => unknown) => {
    switch (prop) {
      case "subscribe":
        return (pool: string, onWake: () => void) => host.subscribe(proc, pool, onWake);
      case "close":
        // The run owns the shared store and closes it at the end.
        return () => Promise.resolve();
      case "transaction":
        return (body: (ops: TxOps<Tx>) => Promise<unknown>) => {
          let inserted = false;
          const commit = advancing;
          advancing = null;
          return call(
            "transaction",
            async (crashAt) => {
              const seen: ClaimSeen[] = [];
              let count = 0;
              const tx: RunningTx = {
                proc,
                open: true,
                inserted: false,
                op: (what) => {
                  if (crashAt !== null && ++count >= crashAt && !proc.dead) host.kill(proc, `inside a transaction, at ${what}`);
                  if (proc.dead) throw new SimCrash();
                  for (const c of seen) c.atCommit = false;
                },
              };
              const result = await target.transaction((ops) =>
                runInside(tx, async () => {
                  const out = await body(dyingOps(ops, proc, host, tx, seen));
                  // The body may have swallowed the crash: a dead process commits nothing.
                  if (proc.dead) throw new SimCrash();
                  return out;
                }),
              );
              inserted = tx.inserted;
              for (const c of seen) host.claimed(c);
              return result;
            },
            commit !== null,
            null,
            () => inserted,
            commit,
          );
        };
      case "workflows":
        return (tx?: Tx) => {
          // In the caller's own transaction, as the caller runs it.
          if (tx !== undefined) return fn.call(target, tx);
          // Outside a transaction each operation is a store call of its own.
          const ops = fn.call(target) as WorkflowOps;
          return new Proxy(ops, {
            get(t, name) {
              const op: unknown = Reflect.get(t, name, t);
              if (typeof op !== "function" || typeof name !== "string") return op;
              return (...args: unknown[]) => {
                const read = name === "readSteps" ? String(args[0]) : null;
                if (read !== null) advancing = read;
                return call(`workflows.${name}`, async () => {
                  const out: unknown = await (op as (...a: unknown[]) => unknown).apply(t, args);
                  if (read !== null) host.advanceRead(read);
                  return out;
                });
              };
            },
          });
        };
      case "claim":
        return (pool: string, opts: ClaimOptions) =>
          call(
            prop,
            async () => {
              const res = (await fn.call(target, pool, opts)) as ClaimResult;
              host.claimed(seenOf(proc, prop, res.now, host.now(), res.claimed));
              return res;
            },
            true,
          );
      case "complete":
        return (...args: unknown[]) =>
          call(
            prop,
            async () => {
              const res = (await fn.apply(target, args)) as CompleteResult;
              if (res.claim) host.claimed(seenOf(proc, prop, res.claim.now, host.now(), res.claim.claimed));
              return res;
            },
            args[3] != null,
          );
      case "insertAndClaim":
        return (row: unknown, opts: ClaimOptions) =>
          call(
            prop,
            async () => {
              const res = (await fn.call(target, row, opts)) as WorkRow | null;
              const ranAt = host.now();
              host.claimed(seenOf(proc, prop, res?.startedAt ?? ranAt, ranAt, res ? [res] : []));
              return res;
            },
            true,
          );
      case "heartbeat":
        return (pool: string, workerId: string, refs: readonly AttemptRef[], lease: LeaseRenewal) =>
          call(
            prop,
            async () => {
              const res = (await fn.call(target, pool, workerId, refs, lease)) as HeartbeatResult;
              host.heartbeat({ proc: proc.label, workerId, ranAt: host.now(), refs, lost: res.lost });
              return res;
            },
            true,
            refs,
          );
      default:
        return (...args: unknown[]) => call(prop, () => Promise.resolve(fn.apply(target, args)));
    }
  };
  return new Proxy(real, {
    get(target, prop) {
      if (prop === "workers") return workers;
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function" || typeof prop !== "string") return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (prop === "isTransientError") return fn.bind(target);
      const outside = queued(target, prop, fn) as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        const tx = insideOf(proc);
        return tx ? direct(target, prop, fn, args, tx) : outside(...args);
      };
    },
  });
}

/** A call made inside a running transaction `tx`: straight to the store, as one of its operations. */
function direct<Tx>(target: Driver<Tx>, prop: string, fn: (...args: unknown[]) => unknown, args: unknown[], tx: RunningTx): unknown {
  tx.op(prop);
  if (prop === "insertWork") tx.inserted = true;
  if (prop === "workflows") return counted(fn.apply(target, args) as WorkflowOps, tx);
  if (prop === "transaction") {
    const body = args[0] as (ops: TxOps<Tx>) => Promise<unknown>;
    return target.transaction((ops) => body(counted(ops, tx)));
  }
  return fn.apply(target, args);
}

function seenOf(proc: ProcHandle, method: string, now: number, ranAt: number, claimed: readonly WorkRow[]): ClaimSeen {
  return {
    proc: proc.label,
    method,
    now,
    ranAt,
    claimed: claimed.map((r) => r.id),
    attempts: claimed.map((r) => r.attempt),
    keys: claimed.map((r) => r.key),
    atCommit: true,
  };
}

/**
 * The operations of one transaction, which die with the process (at the `crashAt` drawn
 * for `tx`, counting every operation, those of calls made inside it too). Claims made in
 * it go to `seen`; a call after a claim marks it as not `atCommit`.
 */
function dyingOps<Tx>(ops: TxOps<Tx>, proc: ProcHandle, host: OpHost, tx: RunningTx, seen: ClaimSeen[]): TxOps<Tx> {
  return new Proxy(ops, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      const fn = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        try {
          tx.op(String(prop));
        } catch (e) {
          return Promise.reject(e);
        }
        if (prop !== "claim") return fn.apply(target, args);
        return (fn.apply(target, args) as Promise<ClaimResult>).then((res) => {
          seen.push(seenOf(proc, "transaction claim", res.now, host.now(), res.claimed));
          return res;
        });
      };
    },
  });
}
