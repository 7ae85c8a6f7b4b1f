/**
 * The input of an enqueue, checked and turned into rows: every option and payload is
 * validated here, before anything is written, with an InvalidArgumentError naming the
 * field at fault.
 */
import type { NewWork } from "../driver/driver.js";
import type { TransactionExecutor } from "../driver/tx-executor.js";
import { InvalidArgumentError } from "../errors.js";
import type { HandlerRegistry } from "../handlers.js";
import { newWorkId } from "../ids.js";
import { encodeJson, encodeOptionalJson } from "../json.js";
import { checkInt, checkName, checkOptionKeys, checkRetryBehavior, describeValue, type ResolvedOptions } from "../options.js";
import type { PoolLogger } from "../events.js";
import type { RetryBehavior, WorkKind } from "../types.js";
import { resolveRunAt } from "./schedule.js";

/** Most items in one batch enqueue. */
export const MAX_BATCH = 10_000;

const MUTATION_OPTIONS = ["runAt", "runAfter", "onComplete", "context", "name", "tx"];
const ACTION_OPTIONS = [...MUTATION_OPTIONS, "retry", "timeoutMs"];
const WEEK_MS = 7 * 24 * 3600 * 1000;

/** What an enqueue call gave, as the public methods pass it on. */
export interface EnqueueInput {
  kind: WorkKind;
  handle: unknown;
  /** The args of each row to make. */
  argsList: readonly unknown[];
  options: unknown;
  /** `args` for a single enqueue, `argsArray` for a batch: the field errors name. */
  argsField: "args" | "argsArray";
}

/** What the pool needs to check an enqueue. */
export interface EnqueueContext<Tx> {
  pool: string;
  options: ResolvedOptions;
  handlers: HandlerRegistry<Tx>;
  logger: PoolLogger;
}

/** Checks `argsArray` of a batch enqueue. */
export function checkBatch<A>(argsArray: readonly A[]): readonly A[] {
  if (!Array.isArray(argsArray)) throw new InvalidArgumentError("argsArray", "must be an array of args");
  if (argsArray.length > MAX_BATCH)
    throw new InvalidArgumentError("argsArray", `has ${argsArray.length} items; at most ${MAX_BATCH} per batch`);
  return argsArray;
}

function resolveRetry(opts: ResolvedOptions, retry: unknown): RetryBehavior | null {
  if (retry === undefined) return opts.retryActionsByDefault ? { ...opts.defaultRetryBehavior } : null;
  if (retry === true) return { ...opts.defaultRetryBehavior };
  if (retry === false) return null;
  if (typeof retry === "object" && retry !== null) return checkRetryBehavior("retry", retry);
  throw new InvalidArgumentError("retry", `must be a boolean or { maxAttempts, initialBackoffMs, base }, got ${describeValue(retry)}`);
}

function checkOptions(kind: WorkKind, options: unknown): Record<string, unknown> {
  if (kind === "mutation" && typeof options === "object" && options !== null) {
    for (const key of ["retry", "timeoutMs"]) {
      if (Object.prototype.hasOwnProperty.call(options, key)) {
        throw new InvalidArgumentError(
          key,
          "is not an option of enqueueMutation (mutations run once in a transaction and are not retried or timed out)",
        );
      }
    }
  }
  if (options === undefined) return {};
  return checkOptionKeys(
    "options",
    options,
    kind === "action" ? ACTION_OPTIONS : MUTATION_OPTIONS,
    kind === "action" ? "enqueueAction" : "enqueueMutation",
  );
}

/** Validates everything and builds the rows, with the caller's `tx` if any; throws before anything is written. */
export function prepareEnqueue<Tx>(
  ctx: EnqueueContext<Tx>,
  input: EnqueueInput,
): { rows: NewWork[]; tx: Tx | TransactionExecutor | undefined } {
  const { kind, argsField } = input;
  const fnName = ctx.handlers.checkHandle("handle", input.handle, kind);
  const o = checkOptions(kind, input.options);
  const now = ctx.options.clock.now();
  const runAt = resolveRunAt(o, now, ctx.logger);
  const retry = kind === "action" ? resolveRetry(ctx.options, o.retry) : null;
  const timeoutMs = o.timeoutMs === undefined ? null : checkInt("timeoutMs", o.timeoutMs, 1, WEEK_MS);
  const onComplete = o.onComplete === undefined ? null : ctx.handlers.checkHandle("onComplete", o.onComplete, "onComplete");
  if (o.context !== undefined && onComplete === null)
    throw new InvalidArgumentError("context", "is only delivered to onComplete; give onComplete too");
  const context = encodeOptionalJson("context", o.context);
  const name = o.name === undefined ? null : checkName("name", o.name, 200);
  const rows = input.argsList.map((args, i) => ({
    id: newWorkId(now),
    pool: ctx.pool,
    kind,
    fnName,
    name,
    args: encodeJson(argsField === "args" ? "args" : `argsArray[${i}]`, args),
    runAt,
    enqueuedAt: now,
    retry,
    timeoutMs,
    onComplete,
    context,
  }));
  return { rows, tx: o.tx as Tx | TransactionExecutor | undefined };
}
