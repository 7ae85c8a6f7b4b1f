/**
 * The simulated application: one action, one mutation and one onComplete handler whose
 * behaviour each work carries in its args (so the checker can tell the right result of
 * any stored row), and the random enqueue options of a run.
 */
import { NonRetryableError, type BatchItem, type Workpool } from "../../src/index.js";
import type { ResultKind } from "../../src/types.js";
import type { Rng } from "./rng.js";
import type { SimStore } from "./stores.js";

/** How an action or mutation behaves. */
export type Behavior = "ok" | "throw" | "nonretry" | "hang" | "large" | "mok" | "mthrow";

/** The args of every simulated work. */
export interface WorkArgs {
  b: Behavior;
  /** throw: attempts below this number throw, later ones succeed. */
  f?: number;
  /** large: length of the returned padding. */
  big?: number;
}

/**
 * The onComplete context: how many tries throw before one succeeds, and the result kinds
 * the work was enqueued with in `onCompleteExcludeKinds` (so the checker reads them from
 * the row without trusting the store's own copy).
 */
export interface OcContext {
  t: number;
  x?: ResultKind[];
}

/** What an action returns: the attempt that produced it (the checker compares it with the row). */
export interface ActionValue {
  a: number;
  pad?: string;
}

/** An action attempt in flight, settled by the scheduler. */
export interface ActionCall {
  procLabel: string;
  workId: string;
  attempt: number;
  args: WorkArgs;
  signal: AbortSignal;
  resolve(v: ActionValue): void;
  reject(e: unknown): void;
}

/** The marker every error the workload throws carries, with the attempt that threw. */
export const marker = (attempt: number): string => `[sim a=${attempt}]`;

/** Reads the attempt out of an error text with the workload's marker, or null. */
export function markedAttempt(error: string): number | null {
  const m = /\[sim a=(\d+)\]/.exec(error);
  return m ? Number(m[1]) : null;
}

/** What the handlers report to the simulator. */
export interface WorkloadHooks {
  store: SimStore;
  pool: string;
  actionStarted(call: ActionCall): void;
  /** Counts onComplete tries per work (tries that threw roll back, so they live here). */
  ocTries: Map<string, number>;
  /** The result kind every call of the onComplete handler was given, per work, whatever became of the call. */
  ocCalls: Map<string, string[]>;
  /** In a run whose actions are batch actions: the batch handler's maxWaitMs. */
  batchWaitMs?: number;
}

/** Defines the workload's handlers on one process's pool instance. */
export function defineWorkload(pool: Workpool<unknown>, procLabel: string, hooks: WorkloadHooks) {
  // Every action of the workload behaves alike; workflow maps define one per map under its own name.
  const defineAct = (name: string) =>
    pool.defineAction(
      name,
      (ctx, args: WorkArgs) =>
        new Promise<ActionValue>((resolve, reject) =>
          hooks.actionStarted({ procLabel, workId: ctx.workId, attempt: ctx.attempt, args, signal: ctx.signal, resolve, reject }),
        ),
    );
  const act = defineAct("act");
  const mut = pool.defineMutation("mut", async (ctx, args: WorkArgs) => {
    await hooks.store.writeApp(ctx.tx, hooks.pool, ctx.workId);
    if (args.b === "mthrow") throw new Error(`sim mutation failure ${marker(ctx.attempt)}`);
    return { a: ctx.attempt };
  });
  const oc = pool.defineOnComplete("oc", async (ctx, { workId, context, result }) => {
    hooks.ocCalls.set(workId, [...(hooks.ocCalls.get(workId) ?? []), result.kind]);
    const tries = hooks.ocTries.get(workId) ?? 0;
    if (tries < (context as OcContext).t) {
      hooks.ocTries.set(workId, tries + 1);
      throw new Error("sim onComplete failure");
    }
    await hooks.store.writeOc(ctx.tx, hooks.pool, workId, result.kind);
  });
  // Each item is an action call of its own, settled by the scheduler like one; an item
  // aborted (timeout, cancel, lost lease) gets an Error, so a hanging item holds no other.
  const actb = pool.defineBatchAction(
    "actb",
    (_ctx, items: BatchItem<WorkArgs>[]) =>
      Promise.all(
        items.map(
          (item) =>
            new Promise<ActionValue | Error>((resolve) => {
              const { signal } = item;
              if (signal.aborted) return resolve(new Error("sim batch item aborted"));
              signal.addEventListener("abort", () => resolve(new Error("sim batch item aborted")), { once: true });
              const reject = (e: unknown): void => resolve(e instanceof Error ? e : new Error(String(e)));
              hooks.actionStarted({ procLabel, workId: item.workId, attempt: item.attempt, args: item.args, signal, resolve, reject });
            }),
        ),
      ),
    { maxBatchSize: 3, maxWaitMs: hooks.batchWaitMs ?? 0 },
  );
  return { act, actb, mut, oc, defineAct };
}

/** Settles an action attempt as its behaviour says (hang never settles: only its abort ends it). */
export function settleAction(call: ActionCall): void {
  const { args, attempt } = call;
  switch (args.b) {
    case "ok":
      return call.resolve({ a: attempt });
    case "large":
      return call.resolve({ a: attempt, pad: "x".repeat(args.big ?? 0) });
    case "throw":
      if (attempt >= (args.f ?? Infinity)) return call.resolve({ a: attempt });
      return call.reject(new Error(`sim failure ${marker(attempt)}`));
    case "nonretry":
      return call.reject(new NonRetryableError(`sim permanent failure ${marker(attempt)}`));
    default:
      return;
  }
}

/** Random args of a new action. */
export function actionArgs(rng: Rng): WorkArgs {
  const b = rng.weighted({ ok: 5, throw: 3, nonretry: 1, hang: 1, large: 1 } as const);
  if (b === "throw") return { b, f: rng.chance(0.5) ? rng.int(2, 3) : 99 };
  if (b === "large") return { b, big: rng.chance(0.1) ? 1_100_000 : rng.int(1_000, 40_000) };
  return { b };
}

/** Random args of a new mutation. */
export function mutationArgs(rng: Rng): WorkArgs {
  return { b: rng.chance(0.25) ? "mthrow" : "mok" };
}
