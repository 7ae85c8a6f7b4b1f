/**
 * The input of an enqueue, checked and turned into rows: every option and payload is
 * validated here, before anything is written, with an InvalidArgumentError naming the
 * field at fault.
 */
import type { NewWork, OnConflict } from "../driver/driver.js";
import { newWork, type NewWorkInput } from "../driver/work-columns.js";
import type { TransactionExecutor } from "../driver/tx-executor.js";
import { InvalidArgumentError } from "../errors.js";
import type { HandlerRegistry } from "../handlers.js";
import { encodeJson, encodeOptionalJson } from "../json.js";
import { checkLogLevel, checkRetryBehavior, type ResolvedOptions } from "../options.js";
import { checkInt, checkName, checkOptionKeys, describeValue, optionKeys } from "../checks.js";
import type { ActionEnqueueOptions, ActionOnlyOptions, EnqueueOptions } from "../call-options.js";
import type { PoolLogger } from "../events.js";
import type { ResultKind, RetryBehavior, WorkId, WorkKind } from "../types.js";
import { resolveRunAt } from "./run-at.js";
import { encodeMeta } from "./work-meta.js";
import { newWorkId } from "../ids.js";

/** Most items in one batch enqueue. */
export const MAX_BATCH = 10_000;

// The keys both kinds take; an action takes the action-only ones besides.
const SHARED_KEYS = {
  runAt: true,
  runAfter: true,
  onComplete: true,
  context: true,
  onCompleteExcludeKinds: true,
  name: true,
  logLevel: true,
  tx: true,
  priority: true,
  key: true,
  uniqueKey: true,
  onConflict: true,
} as const satisfies Partial<Record<keyof EnqueueOptions<unknown>, true>>;
const MUTATION_OPTIONS = optionKeys<EnqueueOptions<unknown>>()(SHARED_KEYS);
const ACTION_ONLY_OPTIONS = optionKeys<ActionOnlyOptions>()({ retry: true, timeoutMs: true });
const ACTION_OPTIONS = optionKeys<ActionEnqueueOptions<unknown>>()({ ...SHARED_KEYS, retry: true, timeoutMs: true });
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
  /** The enqueuing span's propagation fields, stored with the work (see telemetry). */
  trace?: Record<string, string>;
}

/** Lowest and highest priority accepted (lower runs first). */
export const MIN_PRIORITY = -1000;
export const MAX_PRIORITY = 1000;
/** Longest `key` and `uniqueKey`, in characters. */
export const MAX_KEY_LENGTH = 200;

/** Checked enqueue input: the rows to write, the caller's `tx`, and the ids to answer with. */
export interface PreparedEnqueue<Tx> {
  rows: NewWork[];
  tx: Tx | TransactionExecutor | undefined;
  /**
   * The ids the enqueue returns, one per args, given the ids the store resolved the rows
   * to: a batch with a uniqueKey writes one row, and every args of it gets its id.
   */
  idsFor(resolved: readonly string[]): WorkId[];
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
    for (const key of ACTION_ONLY_OPTIONS) {
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

/** Checks a `key` or `uniqueKey`: 1 to 200 characters (no NUL, which no store can keep). */
export function checkKey(field: string, value: unknown): string {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_KEY_LENGTH || value.includes("\u0000")) {
    throw new InvalidArgumentError(field, `must be a string of 1 to ${MAX_KEY_LENGTH} characters (no NUL), got ${describeValue(value)}`);
  }
  return value;
}

const RESULT_KINDS: readonly ResultKind[] = ["success", "failed", "canceled"];

/** Checks `onCompleteExcludeKinds`: one or two distinct result kinds, and only with an onComplete. */
export function checkExcludeKinds(value: unknown, hasOnComplete: boolean): ResultKind[] | undefined {
  if (value === undefined) return undefined;
  if (!hasOnComplete) throw new InvalidArgumentError("onCompleteExcludeKinds", "only applies to onComplete; give onComplete too");
  const allowed = `an array of "success", "failed" and "canceled" (at most two of them)`;
  if (!Array.isArray(value)) throw new InvalidArgumentError("onCompleteExcludeKinds", `must be ${allowed}, got ${describeValue(value)}`);
  const kinds: ResultKind[] = [];
  for (const [i, k] of value.entries()) {
    if (!RESULT_KINDS.includes(k as ResultKind))
      throw new InvalidArgumentError(`onCompleteExcludeKinds[${i}]`, `must be "success", "failed" or "canceled", got ${describeValue(k)}`);
    if (!kinds.includes(k as ResultKind)) kinds.push(k as ResultKind);
  }
  if (kinds.length === RESULT_KINDS.length)
    throw new InvalidArgumentError(
      "onCompleteExcludeKinds",
      "excludes every result kind, so onComplete would never run; leave onComplete out instead",
    );
  return kinds;
}

/** Checks `uniqueKey` and `onConflict` together. */
function checkUnique(o: Record<string, unknown>): { uniqueKey: string | null; onConflict: OnConflict } {
  if (o.onConflict !== undefined && o.uniqueKey === undefined)
    throw new InvalidArgumentError("onConflict", "is only used with uniqueKey; give uniqueKey too");
  if (o.onConflict !== undefined && o.onConflict !== "keep" && o.onConflict !== "replace")
    throw new InvalidArgumentError("onConflict", `must be "keep" or "replace", got ${describeValue(o.onConflict)}`);
  return {
    uniqueKey: o.uniqueKey === undefined ? null : checkKey("uniqueKey", o.uniqueKey),
    onConflict: (o.onConflict as OnConflict | undefined) ?? "keep",
  };
}

/**
 * A batch with a uniqueKey is one work: its repeats of the key resolve in order, as one
 * enqueue after another would. "keep" keeps the first args, "replace" ends with the last.
 */
function collapseUnique(rows: NewWork[]): NewWork[] {
  if (rows.length <= 1 || rows[0]!.uniqueKey === null) return rows;
  const first = rows[0]!;
  return [first.onConflict === "keep" ? first : { ...first, args: rows[rows.length - 1]!.args }];
}

/** Validates everything and builds the rows, with the caller's `tx` if any; throws before anything is written. */
export function prepareEnqueue<Tx>(ctx: EnqueueContext<Tx>, input: EnqueueInput): PreparedEnqueue<Tx> {
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
  const onCompleteExcludeKinds = checkExcludeKinds(o.onCompleteExcludeKinds, onComplete !== null);
  const logLevel = o.logLevel === undefined ? undefined : checkLogLevel("logLevel", o.logLevel);
  const meta = encodeMeta({ onCompleteExcludeKinds, logLevel, trace: input.trace });
  const name = o.name === undefined ? null : checkName("name", o.name, 200);
  const priority = o.priority === undefined ? 0 : checkInt("priority", o.priority, MIN_PRIORITY, MAX_PRIORITY);
  const key = o.key === undefined ? null : checkKey("key", o.key);
  const { uniqueKey, onConflict } = checkUnique(o);
  // Every row of the call has these fields; each gets its own id and args.
  const shared: NewWorkInput = {
    id: "",
    pool: ctx.pool,
    kind,
    fnName,
    name,
    args: "",
    runAt,
    enqueuedAt: now,
    retry,
    timeoutMs,
    onComplete,
    context,
    priority,
    key,
    meta,
    uniqueKey,
    onConflict,
  };
  const rows = input.argsList.map((args, i) =>
    newWork(shared, newWorkId(now), encodeJson(argsField === "args" ? "args" : `argsArray[${i}]`, args)),
  );
  const count = rows.length;
  const written = collapseUnique(rows);
  const idsFor =
    written.length === count
      ? (resolved: readonly string[]) => [...resolved] as WorkId[]
      : (resolved: readonly string[]) => rows.map(() => resolved[0]! as WorkId);
  return { rows: written, tx: o.tx as Tx | TransactionExecutor | undefined, idsFor };
}
