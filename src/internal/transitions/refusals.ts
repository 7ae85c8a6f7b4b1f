/**
 * How often a refused write is tried at each fallback level (see fallback.ts), and the
 * record of refused rows that maintenance's loops keep between rounds.
 */
import type { WorkRow } from "../../driver/driver.js";
import type { PoolRuntime } from "../runtime.js";

/** How many times a write is refused at one level before the next level is tried. */
export const REFUSALS_PER_LEVEL = 3;

/** The fallback levels there are for `row` (see above). */
export function fallbackLevels(row: Pick<WorkRow, "onComplete">): number {
  return row.onComplete ? 3 : 1;
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
