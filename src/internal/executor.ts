/**
 * Runs one attempt. Actions run outside any transaction with an AbortSignal and an
 * optional timeout; their outcome goes to the Completer. Mutations run inside the
 * transaction that also records their result, so their writes and the state change
 * commit together, exactly once.
 */
import { scheduleTick } from "./work-meta.js";
import type { WorkRow } from "../driver/driver.js";
import type { JsonValue, WorkId } from "../types.js";
import type { CompletedEvent } from "../events.js";
import { encodeJson } from "../json.js";
import { isNonRetryable, thrownData } from "../retry.js";
import type { AttemptOutcome } from "./transitions/outcome.js";
import { finishMutation } from "./transitions/finish.js";
import { errorDetail, errorText } from "../error-text.js";
import type { PoolRuntime } from "./runtime.js";
import { AttemptAbort, AttemptAbortedError } from "./attempt-abort.js";
import { fallbackLevels, writeFallback } from "./transitions/fallback.js";
import type { AttemptOutput } from "./attempt-output.js";
import type { AttemptLog } from "./attempt-logs.js";
import type { Progress } from "./progress.js";

function missingHandler<Tx>(rt: PoolRuntime<Tx>, row: WorkRow): AttemptOutcome {
  const found = rt.handlers.get(row.fnName);
  const error = found
    ? `"${row.fnName}" is defined as ${found.kind === "onComplete" ? "an onComplete" : `a ${found.kind}`} in this worker, but the work is ${row.kind === "action" ? "an action" : "a mutation"}`
    : `no ${row.kind} handler named "${row.fnName}" is defined in this worker of pool "${rt.pool}"`;
  return { kind: "failed", error, retryable: false };
}

/**
 * The outcome of a handler that threw `e`, with the JSON `data` of a WorkError as
 * `errorData`. Data that is not JSON or too large is dropped, and the error says why.
 */
export function thrownOutcome(e: unknown, retryable: boolean): AttemptOutcome & { kind: "failed" } {
  const outcome: AttemptOutcome & { kind: "failed" } = { kind: "failed", error: errorText(e), retryable, detail: errorDetail(e) };
  const data = thrownData(e);
  if (data === undefined) return outcome;
  try {
    encodeJson("errorData", data);
    outcome.errorData = data as JsonValue;
  } catch (bad) {
    outcome.error += ` (its data was not kept: ${errorText(bad).replace(/^workpool: /, "")})`;
  }
  return outcome;
}

/** Encodes a handler's return value for storage; undefined (no value) is allowed. */
function checkReturnValue(value: unknown): unknown {
  if (value !== undefined) encodeJson("returnValue", value);
  return value;
}

/**
 * Runs an action attempt. Resolves with its outcome, or null when the attempt was taken
 * away from this worker (lease lost, shutdown) and its result must not be written.
 * `output` gives the attempt's progress and log keeper, made on the handler's first report.
 */
export async function runAction<Tx>(
  rt: PoolRuntime<Tx>,
  row: WorkRow,
  abort: AttemptAbort,
  output: () => AttemptOutput,
): Promise<AttemptOutcome | null> {
  const handler = rt.handlers.get(row.fnName);
  if (!handler || handler.kind !== "action") return missingHandler(rt, row);
  const { clock } = rt.options;
  const timeoutMs = row.timeoutMs ?? rt.options.actionTimeoutMs;
  const timer =
    timeoutMs === null
      ? null
      : clock.setTimeout(() => abort.abort(new AttemptAbortedError("timeout", `timed out after ${timeoutMs} ms`)), timeoutMs);
  try {
    if (abort.aborted) return fromAbort(abort);
    const { scheduledAt, scheduleId } = scheduleTick(row);
    const ctx = {
      workId: row.id as WorkId,
      attempt: row.attempt,
      name: row.name ?? row.fnName,
      scheduledAt,
      scheduleId,
      get signal(): AbortSignal {
        return abort.signal;
      },
      reportProgress: (value: Progress) => output().reportProgress(value),
      get log(): AttemptLog {
        return output().log;
      },
    };
    // The handler starts a microtask later, once the worker has registered the attempt;
    // an abort meanwhile reaches it through its signal.
    await undefined;
    const value = await untilAborted(handler.fn(ctx, JSON.parse(row.args)), abort);
    if (abort.aborted) return fromAbort(abort);
    try {
      return { kind: "success", returnValue: checkReturnValue(value) };
    } catch (e) {
      return { kind: "failed", error: `the action's ${errorText(e).replace(/^workpool: /, "")}`, retryable: false };
    }
  } catch (e) {
    if (abort.aborted) return fromAbort(abort);
    return thrownOutcome(e, !isNonRetryable(e));
  } finally {
    if (timer !== null) clock.clearTimeout(timer);
  }
}

/**
 * What a handler returned, settled, or (as soon as the attempt is aborted) nothing: an
 * action that ignores its signal keeps running in the background and its result is
 * dropped. A value that is not a promise or thenable is passed on as is. One promise per
 * attempt, not one per race: this runs for every job.
 */
function untilAborted(result: unknown, abort: AttemptAbort): unknown {
  if (!isThenable(result)) return result;
  return new Promise((resolve, reject) => {
    const stop = abort.onAbort(() => resolve(undefined));
    result.then(
      (v) => {
        stop();
        resolve(v);
      },
      (e: unknown) => {
        stop();
        reject(e);
      },
    );
  });
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value instanceof Promise ||
    ((typeof value === "object" || typeof value === "function") &&
      value !== null &&
      typeof (value as { then?: unknown }).then === "function")
  );
}

/** The outcome of an aborted attempt: canceled, timed out, or null (lost, shutdown: nothing is written). */
export function fromAbort(abort: AttemptAbort): AttemptOutcome | null {
  switch (abort.reason?.abortCause) {
    case "canceled":
      return { kind: "canceled" };
    case "timeout":
      return { kind: "failed", error: abort.reason.message, retryable: true };
    default:
      return null;
  }
}

/**
 * Runs a mutation attempt in one transaction with its state change; returns the events to
 * emit. Should the store refuse that transaction (for a reason other than reaching the
 * database), the mutation's writes rolled back: its failure is recorded instead, without
 * running it again (see fallback.ts). An unreachable store rejects: the attempt's lease
 * then expires and maintenance runs it again.
 */
export async function runMutation<Tx>(rt: PoolRuntime<Tx>, row: WorkRow): Promise<CompletedEvent[]> {
  let refusal: unknown;
  try {
    return await runMutationTransaction(rt, row);
  } catch (e) {
    if (rt.driver.isTransientError(e)) throw e;
    refusal = e;
  }
  for (let level = 1; level <= fallbackLevels(row); level++) {
    rt.logger.error(
      `workpool: the store refused the transaction of mutation ${row.id} attempt ${row.attempt}; recording it as failed (fallback level ${level})`,
      refusal,
    );
    try {
      return await writeFallback(rt, row, { kind: "failed", error: errorText(refusal), retryable: false }, level, refusal);
    } catch (e) {
      if (rt.driver.isTransientError(e)) throw e;
      refusal = e;
    }
  }
  throw refusal;
}

function runMutationTransaction<Tx>(rt: PoolRuntime<Tx>, row: WorkRow): Promise<CompletedEvent[]> {
  return finishMutation(rt, row, async (ops) => {
    const handler = rt.handlers.get(row.fnName);
    if (!handler || handler.kind !== "mutation") return missingHandler(rt, row);
    try {
      const ctx = { workId: row.id as WorkId, attempt: row.attempt, name: row.name ?? row.fnName, ...scheduleTick(row), tx: ops.tx };
      const value = await ops.savepoint(async () => checkReturnValue(await handler.fn(ctx, JSON.parse(row.args))));
      return { kind: "success", returnValue: value };
    } catch (e) {
      return thrownOutcome(e, false);
    }
  });
}
