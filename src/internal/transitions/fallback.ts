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

/** How many times a write is refused at one level before the next level is tried. */
export const REFUSALS_PER_LEVEL = 3;

/** The fallback levels there are for `row` (see above). */
export function fallbackLevels(row: Pick<WorkRow, "onComplete">): number {
  return row.onComplete ? 3 : 1;
}

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

/**
 * Rows whose writes the store refused, for loops that try rows again on every round
 * (maintenance): the fallback level each row is at and what the store last said. A row
 * written successfully is forgotten.
 */
export class Refusals {
  private readonly rows = new Map<string, { refusals: number; level: number; error: unknown }>();

  /** The fallback level to write `id` at now (0: as it is). */
  level(id: string): number {
    return this.rows.get(id)?.level ?? 0;
  }

  /** What the store said when it last refused `id`. */
  lastError(id: string): unknown {
    return this.rows.get(id)?.error;
  }

  /**
   * Runs `write` for `row`. A refusal by the store (not an unreachable store, which
   * rejects) is counted against the row, which is tried again on a later round at a
   * higher fallback level every {@link REFUSALS_PER_LEVEL} refusals; resolves with `none`
   * for it meanwhile.
   */
  async isolate<T, Tx>(rt: PoolRuntime<Tx>, row: WorkRow, none: T, write: () => Promise<T>): Promise<T> {
    try {
      const result = await write();
      this.rows.delete(row.id);
      return result;
    } catch (e) {
      if (rt.driver.isTransientError(e)) throw e;
      const entry = this.rows.get(row.id) ?? { refusals: 0, level: 0, error: e };
      entry.error = e;
      if (++entry.refusals >= REFUSALS_PER_LEVEL && entry.level <= fallbackLevels(row)) {
        entry.level++;
        entry.refusals = 0;
      }
      // A bound on memory: rows that keep failing are few; forget the oldest past a thousand.
      if (!this.rows.has(row.id) && this.rows.size >= 1000) this.rows.delete(this.rows.keys().next().value!);
      this.rows.set(row.id, entry);
      rt.logger.error(`workpool: the store refused maintenance's write of ${row.id} (fallback level ${entry.level})`, e);
      return none;
    }
  }
}
