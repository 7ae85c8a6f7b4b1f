/**
 * What happens to an attempt's outcome that the store keeps refusing. A write that fails
 * for a reason other than reaching the database (see Driver.isTransientError) is about
 * the data: a result or error text the store cannot hold, an onComplete whose record
 * cannot be written. Retrying it as it is would fail forever and, in a batch, hold back
 * every other result. So the core writes a simpler outcome instead, one level at a time:
 *
 * 1. the work fails with the store's reason (onComplete still runs, with that failure);
 * 2. (work with onComplete) the outcome as it was, onComplete marked failed unrun;
 * 3. (work with onComplete) the work fails and onComplete is marked failed unrun.
 *
 * Every level is fenced by attempt like any write, and never runs the work's handler.
 */
import type { WorkRow } from "../../driver/driver.js";
import type { CompletedEvent } from "../../events.js";
import { errorText } from "../../error-text.js";
import type { PoolRuntime } from "../runtime.js";
import { decide, type AttemptOutcome, type Transition } from "./outcome.js";
import { applyTransitions, lockCurrentAttempts } from "./write.js";

export { fallbackLevels, REFUSALS_PER_LEVEL, Refusals } from "./refusals.js";

/** The reason stored for a refused write. */
export function refusalReason(attempt: number, error: unknown): string {
  return `workpool could not record the outcome of attempt ${attempt}: the store refused it (${errorText(error)})`;
}

/** `t` simplified to fallback `level` (0: unchanged). */
export function fallbackTransition(t: Transition, level: number, reason: string): Transition {
  if (level === 0) return t;
  const failOutcome = level !== 2 && t.status !== "canceled";
  const refuseOnComplete = level >= 2 && t.row.onComplete !== null;
  // The attempt's record is left out too: it may be what the store refused.
  const out: Transition = failOutcome
    ? { row: t.row, status: "failed", result: { kind: "failed", error: reason }, error: reason }
    : { ...t, failure: undefined };
  if (refuseOnComplete && out.result) out.onCompleteRefused = reason;
  return out;
}

/**
 * Writes `outcome` for `row`'s attempt at fallback `level`, in a transaction of its own.
 * Returns the events to emit (none if the attempt is no longer current).
 */
export async function writeFallback<Tx>(
  rt: PoolRuntime<Tx>,
  row: WorkRow,
  outcome: AttemptOutcome,
  level: number,
  error: unknown,
): Promise<CompletedEvent[]> {
  const reason = refusalReason(row.attempt, error);
  return rt.driver.transaction(async (ops) => {
    const now = rt.options.clock.now();
    const current = (await lockCurrentAttempts(rt, ops, [row])).get(row.id);
    if (!current) return [];
    return applyTransitions(rt, ops, [fallbackTransition(decide(rt, current, outcome, now), level, reason)], now);
  });
}
