/**
 * The hand-back transition: running attempts go back to `pending` unstarted, due now,
 * without counting the attempt (attempt - 1). Fenced by attempt, so an attempt that is no
 * longer current is left alone. Used by a stopping worker and for claims it will not run.
 */
import type { AttemptRef } from "../../driver/driver.js";
import type { PoolRuntime } from "../runtime.js";

/** Puts the current attempts of `refs` back to pending, in one transaction. */
export function releaseAttempts<Tx>(rt: PoolRuntime<Tx>, refs: readonly AttemptRef[]): Promise<void> {
  const fenced = refs.map((r) => ({ id: r.id, attempt: r.attempt }));
  const now = rt.options.clock.now();
  return rt.driver.transaction((ops) => ops.release(fenced, now));
}
