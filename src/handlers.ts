/**
 * Handler definitions: the contexts handlers receive, the typed handles `define*` returns,
 * and the per-pool registry that maps stored names back to functions.
 */
import { InvalidArgumentError } from "./errors.js";
import { checkName } from "./checks.js";
import type { OnCompleteArgs, WorkId } from "./types.js";
import type { AttemptLog } from "./internal/attempt-logs.js";
import type { Progress } from "./internal/progress.js";
import type { BatchActionFn } from "./internal/batch-types.js";
import type { BatchLimits } from "./internal/batch-options.js";

/** What an action receives besides its args. */
export interface ActionCtx {
  /** Id of the work this attempt belongs to. */
  workId: WorkId;
  /** 1-based attempt number. */
  attempt: number;
  /** Aborted on cancel, timeout, lost lease or shutdown; pass it to fetch() and friends. */
  signal: AbortSignal;
  /** The work's name: enqueue's `name` option, else the handler's name. */
  name: string;
  /** The schedule tick (epoch ms) this work was enqueued for; null for work no schedule enqueued. */
  scheduledAt: number | null;
  /** The id of the schedule that enqueued this work; null for work no schedule enqueued. */
  scheduleId: string | null;
  /**
   * Reports how far this attempt got: a number from 0 to 100, or a JSON object of at most
   * 4 KiB. Kept with the attempt and written coalesced (the last value always before its
   * outcome); shown by `status()`, the admin API and the dashboard. A bad value throws
   * InvalidArgumentError and changes nothing; calls after the attempt ended are ignored.
   */
  reportProgress(value: Progress): void;
  /**
   * Log lines kept with this attempt (the last 200 lines or 64 KiB; earlier ones dropped
   * and counted), shown by the admin API, `workpool show --logs` and the dashboard.
   */
  readonly log: AttemptLog;
}

/** What a mutation receives besides its args. */
export interface MutationCtx<Tx> {
  workId: WorkId;
  attempt: number;
  name: string;
  /** The schedule tick (epoch ms) this work was enqueued for; null for work no schedule enqueued. */
  scheduledAt: number | null;
  /** The id of the schedule that enqueued this work; null for work no schedule enqueued. */
  scheduleId: string | null;
  /** The open transaction: write with it, and your writes commit with the work's state change. */
  tx: Tx;
}

/** What an onComplete handler receives besides its args. */
export interface OnCompleteCtx<Tx> {
  /** Id of the work that finished. */
  workId: WorkId;
  /** The name of the onComplete handler. */
  name: string;
  /** The open transaction; writes commit with the delivery record, exactly once. */
  tx: Tx;
}

declare const argsAndResult: unique symbol;
declare const acceptsResult: unique symbol;

/** A defined action of pool `P`, typed by its args and return value. */
export interface ActionHandle<A, R, P extends string = string> {
  readonly kind: "action";
  readonly name: string;
  /** The pool it belongs to: a handle works only with the pool that defined it. */
  readonly pool: P;
  /** Type-only marker; never present at run time. */
  readonly [argsAndResult]?: (args: A) => R;
}

/** A defined mutation of pool `P`, typed by its args and return value. */
export interface MutationHandle<A, R, P extends string = string> {
  readonly kind: "mutation";
  readonly name: string;
  /** The pool it belongs to: a handle works only with the pool that defined it. */
  readonly pool: P;
  /** Type-only marker; never present at run time. */
  readonly [argsAndResult]?: (args: A) => R;
}

/** A defined onComplete handler of pool `P`, typed by the context and return value it accepts. */
export interface OnCompleteHandle<C, R, P extends string = string> {
  readonly kind: "onComplete";
  readonly name: string;
  /** The pool it belongs to: a handle works only with the pool that defined it. */
  readonly pool: P;
  /** Type-only marker; never present at run time. A type error here means the onComplete does not accept this work's result or context. */
  readonly [acceptsResult]?: (args: OnCompleteArgs<C, R>) => void;
}

/** The return value of an action or mutation handle, e.g. for `defineOnComplete<C, ResultOf<typeof send>>`. */
export type ResultOf<H> = H extends ActionHandle<never, infer R, string> | MutationHandle<never, infer R, string> ? R : never;

/** The args of an action or mutation handle. */
export type ArgsOf<H> = H extends ActionHandle<infer A, unknown, string> | MutationHandle<infer A, unknown, string> ? A : never;

/** An action handler function. */
export type ActionFn<A, R> = (ctx: ActionCtx, args: A) => R | Promise<R>;
/** A mutation handler function. Prefer synchronous ones on SQLite (see docs). */
export type MutationFn<Tx, A, R> = (ctx: MutationCtx<Tx>, args: A) => R | Promise<R>;
/** An onComplete handler function. */
export type OnCompleteFn<Tx, C, R> = (ctx: OnCompleteCtx<Tx>, args: OnCompleteArgs<C, R>) => void | Promise<void>;

/** A registered handler, as the worker sees it. */
export type Registered<Tx> =
  | { kind: "action"; fn: ActionFn<unknown, unknown> }
  | { kind: "mutation"; fn: MutationFn<Tx, unknown, unknown> }
  | { kind: "onComplete"; fn: OnCompleteFn<Tx, unknown, unknown> }
  | ({ kind: "batchAction"; fn: BatchActionFn<unknown, unknown> } & BatchLimits);

type AnyHandle = { readonly kind: string; readonly name: string; readonly pool: string };

/** Code of the process warning about a mutation or onComplete that keeps a SQLite store's connection across turns of the event loop. */
export const HELD_CONNECTION_WARNING = "WORKPOOL_SQLITE_HANDLER_AWAITED";

/** The prefix of the names of workpool's own handlers (the workflow layer's). */
export const RESERVED_PREFIX = "workpool:";

/** Handlers of one pool, by name (one namespace for all kinds). */
export class HandlerRegistry<Tx> {
  private readonly handlers = new Map<string, Registered<Tx>>();
  private readonly handles = new WeakSet<object>();

  /**
   * `heldConnection`: the store runs every transaction on its one connection (SQLite), so a
   * mutation or onComplete holds it, and the file's write lock, until its promise settles.
   */
  constructor(
    private readonly pool: string,
    private readonly heldConnection = false,
  ) {}

  /**
   * Registers `fn` under `name`; throws if the name is taken or invalid. Names starting
   * with `workpool:` are the library's own (`internal`): they are refused otherwise, and
   * not watched for holding the connection (their awaits are the library's). A batch
   * action (`limits` set) gets an action handle: it is enqueued like an action.
   */
  define<H extends AnyHandle>(kind: Registered<Tx>["kind"], name: unknown, fn: unknown, internal = false, limits?: BatchLimits): H {
    const field = kind === "onComplete" ? "defineOnComplete(name)" : `define${kind[0]!.toUpperCase()}${kind.slice(1)}(name)`;
    checkName(field, name, 200);
    if (!internal && (name as string).startsWith(RESERVED_PREFIX)) {
      throw new InvalidArgumentError(
        field,
        `names starting with "${RESERVED_PREFIX}" are reserved for workpool's own handlers, got "${String(name)}"`,
      );
    }
    if (typeof fn !== "function") throw new InvalidArgumentError(`${field.replace("(name)", "(handler)")}`, "must be a function");
    const existing = this.handlers.get(name as string);
    if (existing) {
      throw new InvalidArgumentError(
        field,
        `"${String(name)}" is already defined (as ${existing.kind === "onComplete" ? "an onComplete" : `a ${existing.kind}`}) in pool "${this.pool}"; each name may be defined once`,
      );
    }
    const run =
      this.heldConnection && (kind === "mutation" || kind === "onComplete") && !internal
        ? warnWhenHeld(this.pool, kind, name as string, fn as AnyFn)
        : fn;
    this.handlers.set(name as string, { kind, fn: run, ...limits } as Registered<Tx>);
    const handle = Object.freeze({ kind: kind === "batchAction" ? "action" : kind, name: name as string, pool: this.pool }) as unknown as H;
    this.handles.add(handle);
    return handle;
  }

  /** The handler registered under `name`, if any. */
  get(name: string): Registered<Tx> | undefined {
    return this.handlers.get(name);
  }

  /** Checks that `handle` came from this pool's `define*` of the expected kind. */
  checkHandle(field: string, handle: unknown, kind: Registered<Tx>["kind"]): string {
    const h = handle as AnyHandle | null;
    if (typeof h !== "object" || h === null || !this.handles.has(h)) {
      const from = typeof h === "object" && h !== null && typeof h.pool === "string" ? ` (it belongs to pool "${h.pool}")` : "";
      throw new InvalidArgumentError(
        field,
        `must be a handle returned by this pool's define${kind === "onComplete" ? "OnComplete" : kind === "action" ? "Action" : "Mutation"}()${from}`,
      );
    }
    if (h.kind !== kind) throw new InvalidArgumentError(field, `is a ${h.kind} handle ("${h.name}"); expected a ${kind} handle`);
    return h.name;
  }
}

type AnyFn = (ctx: unknown, args: unknown) => unknown;

/**
 * Wraps a mutation or onComplete handler of a SQLite pool: the first time one of its calls
 * is still pending once the event loop has moved on (it awaited a timer, I/O or other
 * work, not just the store's synchronous calls), a process warning says so, once per
 * handler. Meanwhile it held the store's one connection and the file's write lock.
 */
function warnWhenHeld(pool: string, kind: "mutation" | "onComplete", name: string, fn: AnyFn): AnyFn {
  let warned = false;
  return (ctx, args) => {
    const result = fn(ctx, args);
    if (!warned && isThenable(result)) {
      let settled = false;
      void Promise.resolve(result).then(
        () => (settled = true),
        () => (settled = true),
      );
      // Promise reactions that only chain the store's synchronous calls all run before this.
      setImmediate(() => {
        if (settled || warned) return;
        warned = true;
        process.emitWarning(
          `workpool: the ${kind === "onComplete" ? "onComplete" : "mutation"} handler "${name}" of pool "${pool}" was still running ` +
            "after its turn of the event loop; on SQLite it holds the store's connection and the file's write lock until it settles, " +
            "so this process's claims, results and heartbeats and other processes' writes wait for it. Make it synchronous: " +
            "see docs/sqlite.md, Handlers should be synchronous on SQLite",
          { code: HELD_CONNECTION_WARNING },
        );
      });
    }
    return result;
  };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function"
  );
}
