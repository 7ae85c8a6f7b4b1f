/**
 * The internal work that drives runs, as rows: the names of the internal handlers, and the
 * advance, run timeout and cancel request a process with no WorkflowManager (the admin API)
 * writes for a run. The manager enqueues the same work through its pool (engine.ts), with
 * the same names and options, so a started worker of the run's pool carries it out.
 */
import type { NewWork } from "../driver/driver.js";
import { newWork } from "../driver/work-columns.js";
import { newWorkId } from "../ids.js";
import { encodeMeta } from "../internal/work-meta.js";
import type { RetryBehavior } from "../types.js";

/** The names the internal handlers take in the pool. */
export const INTERNAL_PREFIX = "workpool:workflow.";
/** The internal action that advances a run. */
export const ADVANCE_HANDLER = `${INTERNAL_PREFIX}advance`;
/** The onComplete of an advance that gave up. */
export const ADVANCE_DONE_HANDLER = `${INTERNAL_PREFIX}advance-done`;
/** The internal mutation of a run's own timeout. */
export const RUN_TIMEOUT_HANDLER = `${INTERNAL_PREFIX}timeout`;
/** The internal mutation that cancels a run (the admin API's cancel request). */
export const CANCEL_HANDLER = `${INTERNAL_PREFIX}cancel`;

/** Retries of an advance: transient failures (the store unreachable) are retried; a run whose advances all fail ends failed. */
export const ADVANCE_RETRY: RetryBehavior = Object.freeze({ maxAttempts: 12, initialBackoffMs: 250, base: 2 });

/** The unique key of a run's pending advance (one at a time per run). */
export function advanceKey(runId: string): string {
  return `workflow:${runId}`;
}

/** An advance of `runId`, due now: the row `enqueueAdvance` writes. */
export function advanceRow(pool: string, runId: string, now: number): NewWork {
  const ref = JSON.stringify({ r: runId });
  return newWork({
    id: newWorkId(now),
    pool,
    kind: "action",
    fnName: ADVANCE_HANDLER,
    args: ref,
    runAt: now,
    enqueuedAt: now,
    retry: ADVANCE_RETRY,
    onComplete: ADVANCE_DONE_HANDLER,
    context: ref,
    meta: encodeMeta({ onCompleteExcludeKinds: ["success"] }),
    uniqueKey: advanceKey(runId),
  });
}

/** The run timeout of `runId`, due at `deadline`. */
export function runTimeoutRow(pool: string, runId: string, deadline: number, now: number): NewWork {
  return newWork({
    id: newWorkId(now),
    pool,
    kind: "mutation",
    fnName: RUN_TIMEOUT_HANDLER,
    args: JSON.stringify({ r: runId }),
    runAt: deadline,
    enqueuedAt: now,
  });
}

/** A request to cancel `runId`, due now; one pending request per run. */
export function cancelRequestRow(pool: string, runId: string, now: number): NewWork {
  return newWork({
    id: newWorkId(now),
    pool,
    kind: "mutation",
    fnName: CANCEL_HANDLER,
    args: JSON.stringify({ r: runId }),
    runAt: now,
    enqueuedAt: now,
    uniqueKey: `workflow-cancel:${runId}`,
  });
}
